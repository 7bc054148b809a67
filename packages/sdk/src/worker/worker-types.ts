import type { JsonValue } from "@tapedeck/protocol";
import type { WorkerProblem } from "./worker-problem.js";

/** What a host tool gets besides its arguments. */
export interface ToolContext {
  /** `group.name`. */
  readonly tool: string;
  /** `{run_id}/{seq}`, the same on every attempt: pass it on (an `Idempotency-Key` header) so an effect is not repeated when a call is sent again. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly seq: number;
  /** 1, then 2, 3… when an earlier attempt was interrupted (a worker died, a lease lapsed). */
  readonly attempt: number;
  /** W3C trace context of the call, the same on every attempt. */
  readonly traceparent: string;
  /**
   * Aborted when the work is no longer wanted: the run was cancelled or the attempt timed out
   * (`cancelled`), the lease was lost (a heartbeat came too late: another worker may get the
   * call), or the worker is stopping. `signal.reason` says which. Stop working; the answer is dropped.
   */
  readonly signal: AbortSignal;
  /** Keeps the lease now (the worker also does it on its own while the tool runs). Resolves once the server answered; aborts `signal` if the work is no longer wanted. */
  readonly heartbeat: () => Promise<void>;
}

/**
 * A host tool: resolves with its result (JSON; `undefined` is null), or throws to fail the call.
 * A thrown `ToolError`, or any error with a string `code` and `message`, keeps its code; anything
 * else fails with `tool_error`. A failure is the script's `ToolError`, never retried.
 */
export type ToolHandler = (args: never, context: ToolContext) => unknown;

/** `{ <group>: { <name>: async (args, ctx) => result } }`. */
export type WorkerTools = Readonly<Record<string, Readonly<Record<string, ToolHandler>>>>;

export interface WorkerOptions {
  /** The host tools this worker implements. */
  readonly tools: WorkerTools;
  /** Only take calls of runs on this toolset, or on a toolset derived from it (saving a workflow derives one). Default: runs on any toolset (that the key or token can see). */
  readonly toolset?: string;
  /** Tools running at once. Default 4. */
  readonly concurrency?: number;
  /** How long each poll is held when no call waits, ms (at most 30,000). Default 30,000. */
  readonly pollWaitMs?: number;
  /**
   * Problems the worker gets over by itself (the server unreachable or restarting: it polls again
   * after a pause growing to 30 s; a heartbeat that failed), and answers it dropped (one that could
   * not be sent, or that the server no longer took: the lease lapses and the call follows its
   * policy). `problem.message` says it in one line for a log. A request the server refuses (the
   * key, the request) stops the worker instead: `stopped` rejects with it.
   * Default: each problem's `message` on one line of `console.error`, no stack trace.
   */
  readonly onError?: (error: unknown, problem: WorkerProblem) => void;
}

export interface WorkerHandle {
  /**
   * Stops polling and aborts the signals of the running tools; resolves once they have settled
   * and their answers were sent. A tool that returns a result anyway has it sent; one that throws
   * after the stop sends nothing: its lease lapses and the call is sent again (policy `retry`, to
   * another worker, with the same idempotency key) or fails with `outcomeUnknown` (`at_most_once`).
   */
  stop(): Promise<void>;
  /** Settles when the worker has stopped: by `stop()`, or by a request the server refuses (rejects with it). */
  readonly stopped: Promise<void>;
}

/** A result made JSON: `undefined` is null; what JSON cannot hold (a BigInt, a cycle) fails the call. */
export function toJsonResult(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}
