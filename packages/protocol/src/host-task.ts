import type { JsonValue } from "./json.js";

/**
 * One attempt of a host tool call, claimed by the worker that polled it: what the engine's task
 * queue hands out and what a worker receives over `POST /v1/tasks/poll`.
 */
export interface HostTask {
  readonly id: string;
  /** `group.name`. */
  readonly tool: string;
  readonly args: JsonValue;
  /** `{run_id}/{seq}`: the same on every attempt of the call. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly seq: number;
  /** 1, then 2, 3… when an attempt was interrupted (a worker died) and the call is sent again. */
  readonly attempt: number;
  /** W3C trace context of the call. */
  readonly traceparent: string;
  /** Proves the claim: heartbeat, complete and fail send it. */
  readonly lease: string;
  /** Heartbeat before this many ms have passed since the claim or the last heartbeat, or the task is lost. */
  readonly heartbeatTimeoutMs: number;
}
