import type { ToolFailure } from "../failure.js";
import type { HostTask } from "../host-task.js";
import type { JsonValue } from "../json.js";
import { anyJson, id } from "./fields.js";
import { schemaFor } from "./schema-for.js";

/**
 * The wire format of the host-task routes (`/v1/tasks`): how workers long-poll for the calls of
 * host tools, heartbeat while they work, and answer.
 */

/** The longest a poll is held, ms: under the idle timeouts of common proxies. */
export const MAX_POLL_WAIT_MS = 30_000;
/** Tasks one poll may claim: enough to fill a busy worker, few enough that one poll cannot hoard a queue. */
const MAX_TASKS_PER_POLL = 100;
/** Tools one worker may name (each `group.name` or `group.*`). */
const MAX_TOOLS = 1000;

const toolPattern = {
  type: "string",
  maxLength: 300,
  pattern: "^[A-Za-z_$][A-Za-z0-9_$]*\\..+$",
  description: "`group.name`, or `group.*` for every tool of a group.",
} as const;

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

export const pollTasksRequest = schemaFor<PollTasksRequest>()({
  type: "object",
  properties: {
    tools: { type: "array", minItems: 1, maxItems: MAX_TOOLS, items: toolPattern },
    waitMs: { type: "integer", minimum: 0, maximum: MAX_POLL_WAIT_MS, description: `Default ${MAX_POLL_WAIT_MS}.` },
    max: { type: "integer", minimum: 1, maximum: MAX_TASKS_PER_POLL, description: "Default 1." },
    toolset: { ...id, description: "Only calls of runs on this toolset, or on a toolset derived from it (saving a workflow derives one)." },
  },
  required: ["tools"],
  additionalProperties: false,
});

/** One attempt of a host tool call, claimed by the worker that polled it (the wire type, from the protocol). */
export type { HostTask };

export const hostTask = schemaFor<HostTask>()({
  type: "object",
  properties: {
    id: { type: "string" },
    tool: { type: "string" },
    args: anyJson,
    idempotencyKey: { type: "string" },
    runId: { type: "string" },
    seq: { type: "integer" },
    attempt: { type: "integer" },
    traceparent: { type: "string" },
    lease: { type: "string" },
    heartbeatTimeoutMs: { type: "integer" },
  },
  required: ["id", "tool", "args", "idempotencyKey", "runId", "seq", "attempt", "traceparent", "lease", "heartbeatTimeoutMs"],
});

/** `POST /v1/tasks/poll` answers 200, with no task when the wait ran out. */
export interface PolledTasks {
  readonly tasks: readonly HostTask[];
}

export const polledTasks = schemaFor<PolledTasks>()({ type: "object", properties: { tasks: { type: "array", items: hostTask } }, required: ["tasks"] });

/** `/v1/tasks/:id/…`. */
export interface TaskParams {
  readonly id: string;
}

export const taskParams = schemaFor<TaskParams>()({
  type: "object",
  properties: { id: { ...id, description: "A task id (`task_…`)." } },
  required: ["id"],
  additionalProperties: false,
});

const lease = { type: "string", minLength: 1, maxLength: 200, description: "The lease the poll gave with the task." } as const;

/** `POST /v1/tasks/:id/heartbeat`. */
export interface HeartbeatRequest {
  readonly lease: string;
}

export const heartbeatRequest = schemaFor<HeartbeatRequest>()({ type: "object", properties: { lease }, required: ["lease"], additionalProperties: false });

/** `POST /v1/tasks/:id/complete`. */
export interface CompleteTaskRequest {
  readonly lease: string;
  /** The tool's result. Default null. */
  readonly result?: JsonValue;
}

export const completeTaskRequest = schemaFor<CompleteTaskRequest>()({
  type: "object",
  properties: { lease, result: anyJson },
  required: ["lease"],
  additionalProperties: false,
});

/** `POST /v1/tasks/:id/fail`: the script gets a `ToolError` with this failure; never retried. */
export interface FailTaskRequest {
  readonly lease: string;
  readonly error: ToolFailure;
}

export const failTaskRequest = schemaFor<FailTaskRequest>()({
  type: "object",
  properties: {
    lease,
    error: {
      type: "object",
      properties: {
        code: { type: "string", minLength: 1, maxLength: 200 },
        message: { type: "string", maxLength: 65_536 },
        retryable: { type: "boolean" },
        details: anyJson,
      },
      required: ["code", "message"],
      additionalProperties: false,
    },
  },
  required: ["lease", "error"],
  additionalProperties: false,
});

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

export const leaseAnswer = schemaFor<LeaseAnswer>()({
  type: "object",
  description:
    "`ok`: noted. `cancelled`: the run no longer wants the call; stop (an answer is dropped). `lost`: this lease does not hold the task (it lapsed, or there is no such task); stop.",
  properties: { status: { type: "string", enum: ["ok", "cancelled", "lost"] } },
  required: ["status"],
});
