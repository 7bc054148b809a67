/**
 * What a worker tells its harness when something goes wrong that it gets over by itself, or a
 * result it had to drop: each as one line for a log (`message`), never a stack trace, saying
 * what happened and what happens next. The error itself goes with it to `onError`.
 */
import type { HostTask, LeaseStatus } from "@tapedeck/protocol/api";

export type WorkerProblem =
  /** A poll failed (the server unreachable, restarting, overloaded): the worker polls again after `retryInMs`. */
  | { readonly kind: "poll_failed"; readonly message: string; readonly retryInMs: number }
  /** A heartbeat of a running call failed: the tool goes on; the next heartbeat tries again. */
  | { readonly kind: "heartbeat_failed"; readonly message: string; readonly task: TaskRef }
  /** A call's result (or failure) did not reach the server, or the server no longer took it: it is dropped. */
  | { readonly kind: "result_dropped"; readonly message: string; readonly task: TaskRef };

/** Which call a problem is about. */
export interface TaskRef {
  readonly tool: string;
  readonly runId: string;
  readonly seq: number;
  readonly attempt: number;
}

export function pollFailed(error: unknown, retryInMs: number): WorkerProblem {
  return { kind: "poll_failed", retryInMs, message: `polling for calls failed: ${reason(error)} Polling again in ${seconds(retryInMs)}.` };
}

/** A poll failed on one of several nodes: the worker polls the next at once (`retryInMs` 0). */
export function pollFailedOnNode(error: unknown, nodes: number): WorkerProblem {
  return {
    kind: "poll_failed",
    retryInMs: 0,
    message: `polling one of the worker's ${nodes} nodes for calls failed: ${reason(error)} Polling the next node at once.`,
  };
}

export function heartbeatFailed(task: HostTask, error: unknown): WorkerProblem {
  return {
    kind: "heartbeat_failed",
    task: refOf(task),
    message: `a heartbeat for ${callName(task)} failed: ${reason(error)} The tool goes on; the next heartbeat tries again (the lease lapses after ${seconds(task.heartbeatTimeoutMs)} without one).`,
  };
}

/** The answer could not be sent: the server never got it. */
export function resultUndelivered(task: HostTask, answer: "result" | "failure", error: unknown): WorkerProblem {
  return {
    kind: "result_dropped",
    task: refOf(task),
    message:
      `could not deliver the ${answer} of ${callName(task)}: ${reason(error)} It is dropped: the call's lease lapses and the call follows its policy ` +
      "(sent again, to a worker, with the same idempotency key; or outcomeUnknown under at_most_once).",
  };
}

/** The server answered, but no longer wanted the answer. */
export function resultRefused(task: HostTask, answer: "result" | "failure", status: Exclude<LeaseStatus, "ok">): WorkerProblem {
  const why =
    status === "cancelled"
      ? "the run no longer wants it (it was cancelled, or the attempt timed out)"
      : "this worker's lease had lapsed (a heartbeat came too late), so the call may go to another worker";
  return { kind: "result_dropped", task: refOf(task), message: `the server did not take the ${answer} of ${callName(task)}: ${why}. It is dropped.` };
}

/** How a problem is printed when the harness gives no `onError`: one line on stderr. */
export function printProblem(problem: WorkerProblem): void {
  console.error(`tapedeck worker: ${problem.message}`);
}

function refOf(task: HostTask): TaskRef {
  return { tool: task.tool, runId: task.runId, seq: task.seq, attempt: task.attempt };
}

function callName(task: HostTask): string {
  return `${task.tool} (run ${task.runId}, call #${task.seq}, attempt ${task.attempt})`;
}

/** An error's message on one line, ending with a full stop. */
function reason(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
