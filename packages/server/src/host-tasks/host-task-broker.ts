/**
 * Host tools served by workers through the HTTP API, with scopes: a worker only ever receives
 * the calls of runs its key or token can see (their namespace and labels), and of its toolset
 * (or a toolset derived from it: saving a workflow derives one) when it names one. Built on the engine's `HostTaskQueue` (leases, heartbeats, interruptions),
 * whose polls match tools only: the broker keeps one queue per run with host calls in flight, and
 * a poll claims from the queues of the runs it may see.
 *
 * Invariants:
 * - Inner queues are polled with `waitMs: 0` only (claiming is synchronous there); waiting is the
 *   broker's. A call queued for a run wakes the waiting polls that may see it.
 * - Claims run one at a time (`#serialize`): a poll gets at most `max` tasks, a task goes to one
 *   poll, and a call queued while a poll scans is offered to it once it waits (no lost wake-up).
 * - A run's queue lives while it has calls open; a task id outside the caller's scope, or of a
 *   queue that is gone, answers `lost`, exactly like a task that never existed.
 * - A call no poll takes at once is reported `waiting` with the last poll that could have taken
 *   it (its scope and toolset see the run, its tools name the call's), not any poll.
 */
import {
  HostTaskQueue,
  PollTimes,
  systemClock,
  toolMatcher,
  type Clock,
  type HostTask,
  type LeaseAnswer,
  type ToolCallRequest,
  type ToolOutcome,
  type ToolSource,
} from "@tapedeck/engine";
import type { JsonValue, ToolFailure } from "@tapedeck/protocol";
import type { Labels } from "@tapedeck/protocol/api";
import { sees, type Scope } from "../tenancy/scope.js";

/** What the broker needs to know of a run to tell who may see its calls. */
export interface TaskRun {
  readonly toolsetId: string;
  /** The toolsets the run's toolset was derived from (its `base`, that one's base…), nearest first. */
  readonly bases?: readonly string[];
  readonly namespace?: string;
  readonly labels?: Labels;
}

export interface BrokerPoll {
  /** The scope of the worker's key or token. */
  readonly scope: Scope;
  /** `group.name` or `group.*`. */
  readonly tools: readonly string[];
  readonly waitMs: number;
  readonly max: number;
  /** Only runs on this toolset, or on a toolset derived from it. */
  readonly toolset?: string;
  /** Ends the poll (the worker hung up, the server stops). */
  readonly signal?: AbortSignal;
}

interface RunTasks {
  readonly runId: string;
  readonly run: TaskRun;
  readonly queue: HostTaskQueue;
  /** Calls of the run in this queue not yet settled. */
  open: number;
  /** Ids of the tasks claimed from this queue. */
  readonly claimed: Set<string>;
}

interface Waiter {
  readonly poll: BrokerPoll;
  done: boolean;
  readonly finish: (tasks: HostTask[]) => void;
}

export class HostTaskBroker implements ToolSource {
  readonly #runs = new Map<string, RunTasks>();
  readonly #taskRuns = new Map<string, RunTasks>();
  readonly #waiters = new Set<Waiter>();
  readonly #lookup: (runId: string) => Promise<TaskRun | undefined>;
  readonly #clock: Clock;
  readonly #onFault: (error: unknown) => void;
  /** When polls last came, by who polled: what a call waiting for a worker says. */
  readonly #polls: PollTimes<Pick<BrokerPoll, "scope" | "toolset">>;
  #claims: Promise<void> = Promise.resolve();
  #closed = false;

  /** `lookup` reads a run's toolset and scope; `onFault` hears what should never happen (a claim that threw). */
  constructor(options: {
    readonly lookup: (runId: string) => Promise<TaskRun | undefined>;
    readonly clock?: Clock;
    readonly onFault?: (error: unknown) => void;
  }) {
    this.#lookup = options.lookup;
    this.#clock = options.clock ?? systemClock;
    this.#onFault = options.onFault ?? (() => {});
    this.#polls = new PollTimes(this.#clock);
  }

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    if (this.#closed) return { kind: "interrupted", reason: "the server is stopping" };
    let entry: RunTasks;
    try {
      entry = await this.#acquire(request.runId);
    } catch (error) {
      return {
        kind: "interrupted",
        reason: `the server could not read run ${request.runId} to queue the call: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const { queue } = request;
    // The run's queue sees only the polls that reached it; the broker knows every poll that could have.
    const watched = queue && {
      taken: () => queue.taken(),
      waiting: () => queue.waiting(this.#polls.last(`${request.tool.group}.${request.tool.name}`, (who) => visible(who, entry))),
    };
    const outcome = entry.queue.call(watched ? { ...request, queue: watched } : request);
    this.#serialize(() => this.#offer(entry));
    try {
      return await outcome;
    } finally {
      if (--entry.open === 0) this.#release(entry);
    }
  }

  /** Claims up to `max` tasks the poll may see: at once if some wait, else when one arrives, or none after `waitMs`. Never rejects. */
  poll(poll: BrokerPoll): Promise<HostTask[]> {
    const key = JSON.stringify([poll.scope.namespace ?? null, Object.entries(poll.scope.labels).sort(), [...poll.tools].sort(), poll.toolset ?? null]);
    const polled = this.#polls.record(key, { scope: poll.scope, ...(poll.toolset === undefined ? {} : { toolset: poll.toolset }) }, toolMatcher(poll.tools));
    return new Promise((resolve) => {
      let cancelTimer = (): void => {};
      const stop = (): void => waiter.finish([]);
      const waiter: Waiter = {
        poll,
        done: false,
        finish: (tasks) => {
          if (waiter.done) return;
          waiter.done = true;
          // A held poll was polling until it ended.
          polled();
          this.#waiters.delete(waiter);
          cancelTimer();
          poll.signal?.removeEventListener("abort", stop);
          resolve(tasks);
        },
      };
      if (this.#closed || poll.signal?.aborted) return waiter.finish([]);
      poll.signal?.addEventListener("abort", stop, { once: true });
      this.#serialize(async () => {
        const tasks: HostTask[] = [];
        for (const entry of this.#runs.values()) {
          if (waiter.done || tasks.length >= poll.max) break;
          if (visible(poll, entry)) tasks.push(...(await this.#claim(entry, poll, poll.max - tasks.length)));
        }
        // A broker closed while this poll waited for its turn answers it at once.
        if (tasks.length > 0 || poll.waitMs <= 0 || this.#closed) return waiter.finish(tasks);
        if (waiter.done) return;
        this.#waiters.add(waiter);
        cancelTimer = this.#clock.setTimer(this.#clock.now() + poll.waitMs, stop);
      });
    });
  }

  /** Extends the lease. `lost` for a task outside the scope, as for one that does not exist. */
  heartbeat(scope: Scope, taskId: string, lease: string): LeaseAnswer {
    return this.#held(scope, taskId)?.queue.heartbeat(taskId, lease) ?? "lost";
  }

  complete(scope: Scope, taskId: string, lease: string, value: JsonValue): LeaseAnswer {
    return this.#held(scope, taskId)?.queue.complete(taskId, lease, value) ?? "lost";
  }

  fail(scope: Scope, taskId: string, lease: string, failure: ToolFailure): LeaseAnswer {
    return this.#held(scope, taskId)?.queue.fail(taskId, lease, failure) ?? "lost";
  }

  /** Ends every poll (empty) and interrupts every call still queued or claimed. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) waiter.finish([]);
    await Promise.all([...this.#runs.values()].map((entry) => entry.queue.close()));
  }

  /** The run's queue, counting one more open call. The count goes up in the same turn as the look-up, so a queue is never released under a call that found it. */
  async #acquire(runId: string): Promise<RunTasks> {
    let entry = this.#runs.get(runId);
    if (!entry) {
      const run = await this.#lookup(runId);
      if (!run) throw new Error("no such run");
      entry = this.#runs.get(runId);
      if (!entry) {
        entry = { runId, run, queue: new HostTaskQueue(this.#clock), open: 0, claimed: new Set() };
        this.#runs.set(runId, entry);
      }
    }
    entry.open++;
    return entry;
  }

  #release(entry: RunTasks): void {
    this.#runs.delete(entry.runId);
    for (const id of entry.claimed) this.#taskRuns.delete(id);
  }

  /** Offers the run's queued calls to the polls waiting for them, oldest poll first. */
  async #offer(entry: RunTasks): Promise<void> {
    for (const waiter of [...this.#waiters]) {
      if (waiter.done || !visible(waiter.poll, entry)) continue;
      const tasks = await this.#claim(entry, waiter.poll, waiter.poll.max);
      if (tasks.length > 0) waiter.finish(tasks);
      if (entry.queue.pending.queued === 0) return;
    }
  }

  async #claim(entry: RunTasks, poll: BrokerPoll, max: number): Promise<HostTask[]> {
    const tasks = await entry.queue.poll({ tools: poll.tools, waitMs: 0, max });
    for (const task of tasks) {
      entry.claimed.add(task.id);
      this.#taskRuns.set(task.id, entry);
    }
    return tasks;
  }

  #held(scope: Scope, taskId: string): RunTasks | undefined {
    const entry = this.#taskRuns.get(taskId);
    return entry && sees(scope, entry.run) ? entry : undefined;
  }

  /** Runs claims one after another; a claim that throws (a bug) is reported and does not stop the next. */
  #serialize(claim: () => Promise<void>): void {
    this.#claims = this.#claims.then(claim).catch((error: unknown) => this.#onFault(error));
  }
}

function visible(poll: Pick<BrokerPoll, "scope" | "toolset">, entry: RunTasks): boolean {
  const { toolset } = poll;
  return (toolset === undefined || toolset === entry.run.toolsetId || (entry.run.bases?.includes(toolset) ?? false)) && sees(poll.scope, entry.run);
}
