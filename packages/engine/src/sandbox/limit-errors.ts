import type { GuardedLimit, GuestError, SandboxLimits } from "./sandbox.js";

/**
 * The errors a script ends with when it goes past a limit: each says which limit, its value
 * and what to do, because the reader is usually the model that wrote the script. A limit error
 * is made only from the host's own knowledge (the guard tripped, the watchdog stopped the
 * worker): an error the script throws is the script's own, whatever its name and message.
 */

export type { GuardedLimit };

const MiB = 1024 * 1024;
const KEEP_LESS = "Keep less data in the script: ask tools for smaller results (filters, pages, fewer fields) and drop what you no longer need.";
const MOVE_CPU = "Scripts orchestrate tool calls; move heavy computation into a tool.";

function limitError(limit: GuardedLimit, message: string, stack?: string): GuestError {
  return { kind: "limit", name: "LimitError", message, limit, ...(stack === undefined ? {} : { stack }) };
}

export function guardedLimitError(limit: GuardedLimit, limits: SandboxLimits, stack?: string): GuestError {
  switch (limit) {
    case "cpu":
      return limitError("cpu", `The script used more than ${limits.cpuMsPerStep} ms of CPU without waiting for a tool call. ${MOVE_CPU}`, stack);
    case "stuck":
      return limitError(
        "stuck",
        `The script used more than ${limits.cpuMsPerStep} ms of CPU without waiting for a tool call, inside a built-in function ` +
          "that cannot be interrupted (such as join, lastIndexOf or sort over an array millions of elements long), so its sandbox was stopped. " +
          MOVE_CPU,
      );
    case "fuel":
      return limitError(
        "fuel",
        `The code used all its fuel (${limits.fuel ?? 0} interrupt polls, about ${(limits.fuel ?? 0) * 10_000} branches and calls): it stops at the same point every time. ` +
          "Do less work per call (smaller inputs, fewer iterations), or ask for a larger fuel limit.",
        stack,
      );
    case "memory":
      return limitError("memory", `The script used more than ${Math.round(limits.memoryBytes / MiB)} MiB of memory, its sandbox's limit. ${KEEP_LESS}`, stack);
  }
}

/**
 * QuickJS's "stack overflow" `InternalError` is the script's own error (it recursed too deep),
 * and a script can throw one itself: it stays a script error, with what it usually means added.
 */
export function explainStackOverflow(error: GuestError, limits: SandboxLimits): GuestError {
  if (error.kind !== "script" || error.name !== "InternalError" || error.message !== "stack overflow") return error;
  return {
    ...error,
    message:
      `stack overflow: the script nested calls deeper than its stack allows (${Math.round(limits.stackBytes / 1024)} KiB, about 1,500 calls), ` +
      "usually through deep or endless recursion. Use a loop instead.",
  };
}
