import type { JsonValue, ToolFailure } from "@tapedeck/protocol";

/**
 * The host task queue sub-store: the attempts of host tool calls waiting for workers, held by
 * them, or answered, so that a worker polling any process sharing the store sees every task,
 * and an engine that stops loses none. Each attempt of a call is one task. Contract:
 * `contracts/host-task-store-contract.ts`.
 *
 * A task goes `queued → claimed → answered | lapsed`; the run may withdraw it at any time (a
 * queued one is deleted, a claimed one becomes `withdrawn` until its worker reports or its lease
 * lapses), and the process waiting for it removes it once it has its outcome. The append that
 * schedules a call may queue its first attempt in its commit (`RunPatch.hostTasks`); the append
 * that ends a run withdraws all of its tasks in its commit (`RunPatch`).
 *
 * Invariants every implementation keeps:
 * - A task is claimed by one poll at a time, whatever the process: concurrent claims never
 *   return the same task (PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED`).
 * - Only the current lease of a claimed task heartbeats or answers it; a late answer from a lost
 *   lease is refused (`lost`), and a task is answered once.
 * - Lease times are the caller's clock (`now`), so tests on a virtual clock see them move.
 * - Notifications (on the store's notifier, once committed): `enqueue` publishes
 *   `HOST_TASKS_TOPIC` (polls waiting for work look again); `claim`, `answer` and `expire`
 *   publish `hostTaskWaiterTopic(waiter)` of each task they change (the process running the call
 *   looks at it again).
 */
export interface HostTaskStore {
  /**
   * Queues an attempt of a call, or of a sub-call (a user tool's invocation of a host tool: its
   * own idempotency key `{run}/{seq}.{n}`, its call's seq). A task is identified by its run,
   * idempotency key and attempt, never by its seq alone. When that attempt has a task already (an
   * engine that stopped queued it and this one resumes the run), nothing is queued: that task is
   * returned as it stands, now waited for by `task.waiter`. Either way the other attempts of the
   * call still kept are given up (a queued, answered or lapsed one deleted, a claimed one
   * withdrawn): only the latest attempt of a call stands.
   */
  enqueue(task: NewHostTask): Promise<HostTaskRecord>;
  /** Claims up to `max` queued tasks `filter` matches, oldest first, each with a new lease until `now + heartbeatTimeoutMs`. */
  claim(filter: HostTaskFilter, max: number, now: number): Promise<HostTaskRecord[]>;
  /** Gives a claimed task back to the queue, as if never claimed: the poll that claimed it ended before any worker saw it. Does nothing unless `lease` holds it. Publishes `HOST_TASKS_TOPIC`. */
  release(taskId: string, lease: string): Promise<void>;
  /** Extends a claimed task's lease to `now + heartbeatTimeoutMs`. */
  heartbeat(taskId: string, lease: string, now: number): Promise<LeaseAnswer>;
  /** Records the worker's answer of a claimed task; `cancelled` (and the task removed) if it was withdrawn. */
  answer(taskId: string, lease: string, answer: HostTaskAnswer, now: number): Promise<LeaseAnswer>;
  /** The run no longer wants the attempt: a queued (or answered, or lapsed) task is deleted; a claimed one becomes `withdrawn`. */
  withdraw(taskId: string): Promise<void>;
  /**
   * Claimed tasks whose lease ends at or before `now` become `lapsed` and are returned (each once);
   * withdrawn ones whose lease lapsed are deleted (no worker will report them now).
   */
  expire(now: number): Promise<HostTaskRecord[]>;
  /** The tasks of these ids still kept, in no particular order. */
  get(taskIds: readonly string[]): Promise<HostTaskRecord[]>;
  /** The task kept for an attempt of a call (or sub-call) by its idempotency key, if any. */
  find(runId: string, idempotencyKey: string, attempt: number): Promise<HostTaskRecord | undefined>;
  /** Deletes these tasks (their outcomes were taken). */
  remove(taskIds: readonly string[]): Promise<void>;
  /** Tasks in these states (default: every state) that `filter` matches, oldest first, at most `limit` (default 100). */
  list(filter?: Partial<HostTaskFilter> & { readonly states?: readonly HostTaskState[]; readonly limit?: number }): Promise<HostTaskRecord[]>;
}

export interface NewHostTask {
  /** `task_…`: what a worker names the task by. */
  readonly id: string;
  readonly runId: string;
  readonly seq: number;
  readonly attempt: number;
  /** `group.name`. */
  readonly tool: string;
  readonly args: JsonValue;
  readonly idempotencyKey: string;
  readonly traceparent: string;
  /** How long a lease holds without a heartbeat, ms (the tool's `heartbeatTimeout`). */
  readonly heartbeatTimeoutMs: number;
  /** Who may claim it. */
  readonly audience: HostTaskAudience;
  /** The process that runs the call and waits for the answer: `hostTaskWaiterTopic(waiter)` tells it. */
  readonly waiter: string;
  readonly createdAt: number;
}

/**
 * A task written by a run's append (`RunPatch.hostTasks`) rather than by `enqueue`: the first
 * attempt of a call, in the commit of the `call.scheduled` entry that schedules it. With `claim`,
 * it is written claimed under that lease: a poll held in the writing process takes it, and is
 * answered once the commit is durable.
 */
export interface StagedHostTask extends NewHostTask {
  readonly claim?: { readonly lease: string; readonly leaseUntil: number };
}

/** The run a task belongs to, as far as deciding which polls may claim it. */
export interface HostTaskAudience {
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** The run's toolset, then the toolsets it derives from (its `base`, that one's base…). */
  readonly toolsets: readonly string[];
}

/** Which tasks a poll may claim (every field given must match). */
export interface HostTaskFilter {
  /** `group.name`, or `group.*` for every tool of a group. */
  readonly tools: readonly string[];
  /** Only tasks of runs in this namespace. */
  readonly namespace?: string;
  /** Only tasks of runs carrying every one of these labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Only tasks of runs on this toolset or on a toolset derived from it. */
  readonly toolset?: string;
}

export type HostTaskState =
  /** Waiting for a worker. */
  | "queued"
  /** A worker holds it under `lease` until `leaseUntil`. */
  | "claimed"
  /** Its worker answered (`answer`): the process running the call takes it. */
  | "answered"
  /** Its worker missed its heartbeat: the attempt is interrupted. */
  | "lapsed"
  /** The run gave it up while a worker held it: that worker hears `cancelled`. */
  | "withdrawn";

export interface HostTaskRecord extends NewHostTask {
  readonly state: HostTaskState;
  /** While claimed (or withdrawn): the lease the worker reports with, and until when it holds. */
  readonly lease?: string;
  readonly leaseUntil?: number;
  /** Once answered. */
  readonly answer?: HostTaskAnswer;
}

/** What a worker answered. */
export type HostTaskAnswer =
  /** The tool's result. */
  | { readonly kind: "result"; readonly value: JsonValue }
  /** The tool's failure: the script gets a `ToolError`; never retried. */
  | { readonly kind: "failure"; readonly failure: ToolFailure };

/** What a lease holder is told when it reports. */
export type LeaseAnswer =
  /** Noted. */
  | "ok"
  /** The run no longer wants the call: stop (an answer is dropped). */
  | "cancelled"
  /** This lease does not hold the task (it lapsed, it was answered, or there is no such task): stop. */
  | "lost";

/** Published when a task is queued: polls waiting for work look again. */
export const HOST_TASKS_TOPIC = "host-tasks";

/** Published when a task `waiter` waits for is claimed, answered or lapses. */
export function hostTaskWaiterTopic(waiter: string): string {
  return `host-tasks/${waiter}`;
}

/** Whether a poll for `tools` (`group.name`, or `group.*` for a whole group) takes calls of a tool. */
export function toolMatcher(tools: readonly string[]): (tool: string) => boolean {
  const exact = new Set(tools.filter((t) => !t.endsWith(".*")));
  const groups = tools.filter((t) => t.endsWith(".*")).map((t) => t.slice(0, -1));
  return (tool) => exact.has(tool) || groups.some((prefix) => tool.startsWith(prefix));
}

/** Whether a task for `audience` is one `filter` may claim (its tools aside). */
export function audienceMatches(filter: Omit<Partial<HostTaskFilter>, "tools">, audience: HostTaskAudience): boolean {
  if (filter.namespace !== undefined && audience.namespace !== filter.namespace) return false;
  if (filter.toolset !== undefined && !audience.toolsets.includes(filter.toolset)) return false;
  const labels = audience.labels;
  return Object.entries(filter.labels ?? {}).every(([key, value]) => labels !== undefined && Object.hasOwn(labels, key) && labels[key] === value);
}
