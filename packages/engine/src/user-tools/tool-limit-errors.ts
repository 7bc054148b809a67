import { toolFailure, type ToolFailure } from "@tapedeck/protocol";
import type { GuardedLimit } from "../sandbox/sandbox.js";
import type { UserToolLimits } from "../toolset/user-tool-limits.js";

/**
 * The failures a user tool's call ends with when its sandbox's guard stops it, worded for whoever
 * wrote or registered the tool (often a model): the tool's name, the limit by its field in
 * `limits`, its value, and what to do. The sandbox's own texts are written for scripts ("move
 * heavy computation into a tool"), which is no advice for a tool.
 */

/** The code of a failure because the tool went past one of its limits. */
export const LIMIT_EXCEEDED = "limit_exceeded";

const MiB = 1024 * 1024;

/** The failure for `limit`, or undefined when the guard named none (the caller keeps the sandbox's text). */
export function toolLimitFailure(name: string, limit: GuardedLimit | undefined, limits: UserToolLimits): ToolFailure | undefined {
  switch (limit) {
    case "fuel":
      return toolFailure(
        LIMIT_EXCEEDED,
        `${name} used all its fuel (limits.fuel: ${limits.fuel} units, about ${limits.fuel * 10_000} bytecode branches and calls): it stops at the same point every time. ` +
          "Do less work per call (smaller inputs, fewer iterations), or register the tool with a larger limits.fuel.",
      );
    case "cpu":
      return toolFailure(
        LIMIT_EXCEEDED,
        `${name} computed for ${limits.deadlineMs} ms without a host call to wait for, its deadline (limits.deadlineMs), and was stopped before its fuel ran out. ` +
          "Do less work per call, or register the tool with a smaller limits.fuel so that it stops at the same point every time.",
      );
    case "stuck":
      return toolFailure(
        LIMIT_EXCEEDED,
        `${name} ran past its deadline (limits.deadlineMs: ${limits.deadlineMs} ms) inside a built-in function that cannot be interrupted ` +
          "(such as join, lastIndexOf or sort over an array millions of elements long), so its sandbox was stopped. Work on smaller arrays and strings.",
      );
    case "memory":
      return toolFailure(
        LIMIT_EXCEEDED,
        `${name} used more than ${Math.round(limits.memoryBytes / MiB)} MiB of memory (limits.memoryBytes) and was stopped. ` +
          "Keep less data in the tool (smaller results, fewer copies), or register it with a larger limits.memoryBytes.",
      );
    case undefined:
      return undefined;
  }
}
