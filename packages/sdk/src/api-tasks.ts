/**
 * The wire format of the host-task routes (`/v1/tasks`): how workers long-poll for the calls of
 * host tools, heartbeat while they work, and answer. See `api.ts` for the rest of the API.
 */
import type { HostTask, JsonValue, ToolFailure } from "@tapedeck/protocol";

/** The longest a poll is held, ms: under the idle timeouts of common proxies. */
export const MAX_POLL_WAIT_MS = 30_000;

/** `POST /v1/tasks/poll`. */
export interface PollTasksRequest {
  /** The tools the worker implements: `group.name`, or `group.*` for a whole group. */
  readonly tools: readonly string[];
  /** Hold the request this long when no task waits, ms (at most 30,000). Default 30,000. */
  readonly waitMs?: number;
  /** At most this many tasks (default 1, at most 100). */
  readonly max?: number;
  /** Only tasks of runs on this toolset, or on a toolset derived from it. Default: any toolset. */
  readonly toolset?: string;
}

/** One attempt of a host tool call, claimed by the worker that polled it (the wire type, from the protocol). */
export type { HostTask };

/** `POST /v1/tasks/poll` answers 200, with no task when the wait ran out. */
export interface PolledTasks {
  readonly tasks: readonly HostTask[];
}

/** `POST /v1/tasks/:id/heartbeat`. */
export interface HeartbeatRequest {
  readonly lease: string;
}

/** `POST /v1/tasks/:id/complete`. */
export interface CompleteTaskRequest {
  readonly lease: string;
  /** The tool's result. Default null. */
  readonly result?: JsonValue;
}

/** `POST /v1/tasks/:id/fail`: the script gets a `ToolError` with this failure; never retried. */
export interface FailTaskRequest {
  readonly lease: string;
  readonly error: ToolFailure;
}

/** What a lease holder is told when it reports (always 200: each is an expected outcome). */
export type LeaseStatus =
  /** Noted: keep working (heartbeat), or the answer was taken (complete, fail). */
  | "ok"
  /** The run no longer wants this attempt (cancelled, timed out): stop working; an answer is dropped. */
  | "cancelled"
  /** This lease does not hold the task (any more): it lapsed (a missed heartbeat) and the call may be sent to another worker. Stop working; an answer is dropped. */
  | "lost";

export interface LeaseAnswer {
  readonly status: LeaseStatus;
}
