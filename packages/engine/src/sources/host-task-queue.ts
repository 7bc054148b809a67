/**
 * Host tools served by workers outside the engine (the harness's own process, through the
 * server's long-poll API). Each attempt of a call becomes a task; a worker polls for tasks of
 * the tools it implements, claims one with a lease, heartbeats while it works, then completes or
 * fails it.
 *
 * Invariants:
 * - A task is given to one worker at a time; only the holder of its current lease can
 *   heartbeat, complete or fail it. A late answer from a lost lease is refused.
 * - A claimed task whose worker misses its heartbeat (`heartbeatTimeout` of the tool) ends the
 *   attempt as an interruption: the tool's `onInterruption` policy decides (a new attempt is a
 *   new task with the same idempotency key, or `outcomeUnknown`).
 * - An attempt the run no longer wants (timeout, cancel) is withdrawn: a queued task disappears,
 *   a claimed one tells its worker (`heartbeat` answers `cancelled`) and its answer is dropped.
 * - Tasks live in memory: they are derived from the journal, and an engine that restarts sends
 *   its interrupted calls again by policy.
 * - A call's `queue` watcher hears `taken` when a worker claims its attempt, and `waiting` (with
 *   when a worker serving its tool last polled) when no poll takes it at once.
 */
import { randomBytes } from "node:crypto";
import type { HostTask, JsonValue, ToolFailure } from "@tapedeck/protocol";
import { systemClock, type Clock } from "../clock.js";
import { PollTimes } from "./poll-times.js";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "./tool-source.js";

/** A task as a worker sees it (the wire type, shared with the SDK). */
export type { HostTask };

export interface PollRequest {
  /** The tools the worker implements: `group.name`, or `group.*` for a whole group. */
  readonly tools: readonly string[];
  /** How long to hold the poll when no task is waiting, ms (at most `MAX_POLL_MS`). */
  readonly waitMs: number;
  /** At most this many tasks (default 1). */
  readonly max?: number;
  /** Ends the poll early (the worker's HTTP request closed). */
  readonly signal?: AbortSignal;
}

/** What a lease holder is told when it reports. */
export type LeaseAnswer = "ok" | "cancelled" | "lost";

/** The longest a poll is held: long enough to spare requests, short enough for proxies. */
export const MAX_POLL_MS = 30_000;

interface Task {
  readonly request: ToolCallRequest;
  readonly tool: string;
  readonly id: string;
  readonly settle: (outcome: ToolOutcome) => void;
  lease?: string;
  cancelLeaseTimer?: () => void;
  withdrawn: boolean;
}

interface Poller {
  readonly matches: (tool: string) => boolean;
  readonly take: (tasks: Task[]) => void;
  readonly max: number;
}

export class HostTaskQueue implements ToolSource {
  readonly #queued: Task[] = [];
  readonly #claimed = new Map<string, Task>();
  readonly #pollers = new Set<Poller>();
  readonly #polls: PollTimes<undefined>;

  constructor(private readonly clock: Clock = systemClock) {
    this.#polls = new PollTimes(clock);
  }

  /** Calls queued or claimed: for tests and health. */
  get pending(): { readonly queued: number; readonly claimed: number } {
    return { queued: this.#queued.length, claimed: this.#claimed.size };
  }

  call(request: ToolCallRequest): Promise<ToolOutcome> {
    return new Promise<ToolOutcome>((resolve) => {
      const task: Task = {
        request,
        tool: `${request.tool.group}.${request.tool.name}`,
        id: `task_${randomBytes(12).toString("base64url")}`,
        withdrawn: false,
        settle: (outcome) => {
          task.cancelLeaseTimer?.();
          this.#claimed.delete(task.id);
          resolve(outcome);
        },
      };
      request.signal.addEventListener("abort", () => this.#withdraw(task), { once: true });
      if (request.signal.aborted) return this.#withdraw(task);
      for (const poller of this.#pollers) {
        if (poller.matches(task.tool)) {
          this.#pollers.delete(poller);
          return poller.take([this.#claim(task)]);
        }
      }
      this.#queued.push(task);
      request.queue?.waiting(this.#polls.last(task.tool));
    });
  }

  /** Resolves with up to `max` claimed tasks: at once if some wait, else when one arrives or after `waitMs` (empty). */
  poll(request: PollRequest): Promise<HostTask[]> {
    const matches = toolMatcher(request.tools);
    const polled = this.#polls.record([...request.tools].sort().join("\n"), undefined, matches);
    const max = Math.max(1, request.max ?? 1);
    const ready: Task[] = [];
    for (let i = 0; i < this.#queued.length && ready.length < max;) {
      const task = this.#queued[i]!;
      if (matches(task.tool)) {
        this.#queued.splice(i, 1);
        ready.push(this.#claim(task));
      } else {
        i++;
      }
    }
    if (ready.length > 0 || request.waitMs <= 0 || request.signal?.aborted) return Promise.resolve(ready.map(view));
    return new Promise<HostTask[]>((resolve) => {
      const poller: Poller = {
        matches,
        max,
        take: (tasks) => {
          cancelTimer();
          resolve(tasks.map(view));
        },
      };
      const end = (): void => {
        // A held poll was polling until it ended: that is when a worker last polled.
        polled();
        if (this.#pollers.delete(poller)) resolve([]);
      };
      const cancelTimer = this.clock.setTimer(this.clock.now() + Math.min(request.waitMs, MAX_POLL_MS), end);
      request.signal?.addEventListener(
        "abort",
        () => {
          cancelTimer();
          end();
        },
        { once: true },
      );
      this.#pollers.add(poller);
    });
  }

  /** Extends the lease of a claimed task. `cancelled`: the run no longer wants it (stop working); `lost`: the lease is not (or no longer) this one. */
  heartbeat(taskId: string, lease: string): LeaseAnswer {
    const task = this.#held(taskId, lease);
    if (!task) return "lost";
    if (task.withdrawn) return "cancelled";
    this.#armLease(task);
    return "ok";
  }

  /** The worker's result. */
  complete(taskId: string, lease: string, value: JsonValue): LeaseAnswer {
    return this.#answer(taskId, lease, { kind: "result", value });
  }

  /** The worker's failure: the script gets a `ToolError` with it; never retried. */
  fail(taskId: string, lease: string, failure: ToolFailure): LeaseAnswer {
    return this.#answer(taskId, lease, { kind: "failure", failure });
  }

  close(): Promise<void> {
    for (const poller of this.#pollers) poller.take([]);
    this.#pollers.clear();
    for (const task of [...this.#queued, ...this.#claimed.values()]) task.settle({ kind: "interrupted", reason: "the engine closed" });
    this.#queued.length = 0;
    return Promise.resolve();
  }

  #answer(taskId: string, lease: string, outcome: ToolOutcome): LeaseAnswer {
    const task = this.#held(taskId, lease);
    if (!task) return "lost";
    // A withdrawn attempt's outcome goes nowhere: the dispatcher has already ended it.
    task.settle(task.withdrawn ? { kind: "interrupted", reason: "withdrawn" } : outcome);
    if (task.withdrawn) return "cancelled";
    return "ok";
  }

  #held(taskId: string, lease: string): Task | undefined {
    const task = this.#claimed.get(taskId);
    return task && task.lease === lease ? task : undefined;
  }

  #claim(task: Task): Task {
    task.lease = randomBytes(16).toString("base64url");
    this.#claimed.set(task.id, task);
    this.#armLease(task);
    task.request.queue?.taken();
    return task;
  }

  /** A missed heartbeat interrupts the attempt: the worker is presumed dead. */
  #armLease(task: Task): void {
    task.cancelLeaseTimer?.();
    const timeout = task.request.tool.policy.heartbeatTimeoutMs;
    task.cancelLeaseTimer = this.clock.setTimer(this.clock.now() + timeout, () => {
      task.settle({ kind: "interrupted", reason: `the worker missed its heartbeat (no sign of life for ${timeout} ms)` });
    });
  }

  /** The run no longer wants this attempt: the dispatcher has already ended it. */
  #withdraw(task: Task): void {
    task.withdrawn = true;
    const index = this.#queued.indexOf(task);
    if (index >= 0) this.#queued.splice(index, 1);
    // A claimed task stays known until its worker reports or its lease lapses, so the worker
    // hears `cancelled` instead of `lost`.
    if (!this.#claimed.has(task.id)) task.settle({ kind: "interrupted", reason: "withdrawn" });
  }
}

function view(task: Task): HostTask {
  const { request } = task;
  return {
    id: task.id,
    tool: task.tool,
    args: request.args,
    idempotencyKey: request.idempotencyKey,
    runId: request.runId,
    seq: request.seq,
    attempt: request.attempt,
    traceparent: request.traceparent,
    lease: task.lease!,
    heartbeatTimeoutMs: request.tool.policy.heartbeatTimeoutMs,
  };
}

/** Whether a poll for `tools` (`group.name`, or `group.*` for a whole group) takes calls of a tool. */
export function toolMatcher(tools: readonly string[]): (tool: string) => boolean {
  const exact = new Set(tools.filter((t) => !t.endsWith(".*")));
  const groups = tools.filter((t) => t.endsWith(".*")).map((t) => t.slice(0, -1));
  return (tool) => exact.has(tool) || groups.some((prefix) => tool.startsWith(prefix));
}
