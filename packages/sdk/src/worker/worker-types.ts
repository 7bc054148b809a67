import type { JsonValue, WorkerTools } from "@tapedeck/protocol";
import type { WorkerProblem } from "./worker-problem.js";

/** How a host tool function is called, by a worker or by an embedded engine (the protocol's, shared by both). */
export type { ToolContext, ToolHandler, WorkerTools } from "@tapedeck/protocol";

export interface WorkerOptions {
  /** The host tools this worker implements. */
  readonly tools: WorkerTools;
  /** Only take calls of runs on this toolset, or on a toolset derived from it (saving a workflow derives one). Default: runs on any toolset (that the key or token can see). */
  readonly toolset?: string;
  /**
   * More URLs of nodes sharing the client's store (several `tapedeck serve` on one PostgreSQL,
   * where a poll on any node gets every node's calls). When a poll fails because its node is
   * down or restarting, the worker polls the next node at once, and pauses (1 s, doubling, at most
   * 5 s) only after every node failed in a row. A call's heartbeats and answer go to the node that
   * gave it. Default: the client's `baseUrl` alone (pauses then grow to 30 s).
   */
  readonly nodes?: readonly string[];
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
