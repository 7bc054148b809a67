import type { GuestError, SandboxLimits } from "./sandbox.js";

/**
 * The errors a script ends with when it goes past a limit: each says which limit, its value
 * and what to do, because the reader is usually the model that wrote the script.
 */

/** A limit the interrupt handler enforces (see `step-guard.ts`). */
export type GuardedLimit = "cpu" | "heap";

const MiB = 1024 * 1024;
const KEEP_LESS =
  "Keep less data in the script: ask tools for smaller results (filters, pages, fewer fields) and drop what you no longer need.";

function limitError(message: string, stack?: string): GuestError {
  return { kind: "limit", name: "LimitError", message, ...(stack === undefined ? {} : { stack }) };
}

export function guardedLimitError(limit: GuardedLimit, limits: SandboxLimits, heapLimitBytes: number, stack?: string): GuestError {
  if (limit === "cpu") {
    return limitError(
      `The script used more than ${limits.cpuMsPerStep} ms of CPU without waiting for a tool call. ` +
        "Scripts orchestrate tool calls; move heavy computation into a tool.",
      stack,
    );
  }
  return limitError(
    `The script used more memory than its sandbox allows (the sandbox worker's heap grew past ` +
      `${Math.round(heapLimitBytes / MiB)} MiB). ${KEEP_LESS}`,
    stack,
  );
}

/**
 * QuickJS reports its own limits as `InternalError`s: "out of memory" (the runtime's memory
 * limit) and "stack overflow". Returns the limit error for such an error, else undefined.
 */
export function quickJsLimitError(error: { name: string; message: string; stack?: string }, limits: SandboxLimits): GuestError | undefined {
  if (error.name !== "InternalError") return undefined;
  if (error.message === "out of memory") {
    return limitError(`The script used more than ${Math.round(limits.memoryBytes / MiB)} MiB of memory. ${KEEP_LESS}`, error.stack);
  }
  if (error.message === "stack overflow") {
    return limitError(
      `The script overflowed its stack (${Math.round(limits.stackBytes / 1024)} KiB, about 1,500 calls deep), ` +
        "usually through deep or endless recursion. Use a loop instead.",
      error.stack,
    );
  }
  return undefined;
}
