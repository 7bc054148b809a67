/**
 * Host tools served by workers outside the engine (the harness's own process, through the
 * server's long-poll API). Each attempt of a call becomes a task in the store's host task queue
 * (`store/host-task-store.ts`); a worker polls for tasks of the tools it implements (and of the
 * runs it may see), claims one with a lease, heartbeats while it works, then completes or fails
 * it. The queue is the store's, so a worker polling any process sharing the store sees every
 * task, and this class is what one process adds: the calls it runs, the polls it holds.
 *
 * Invariants:
 * - A task is given to one worker at a time; only the holder of its current lease can
 *   heartbeat, complete or fail it. A late answer from a lost lease is refused.
 * - A claimed task whose worker misses its heartbeat (`heartbeatTimeout` of the tool) ends the
 *   attempt as an interruption: the tool's `onInterruption` policy decides (a new attempt is a
 *   new task with the same idempotency key, or `outcomeUnknown`).
 * - An attempt the run no longer wants (timeout, cancel, the run ended) is withdrawn: a queued
 *   task disappears, a claimed one tells its worker (`heartbeat` answers `cancelled`) and its
 *   answer is dropped. An attempt of a run that stops here but stays `running` (the engine
 *   stops or faults: `isSuspension`) stays in the store as it is: the resumed run picks it up
 *   (`resumes`), so a call no worker took is sent as the same attempt, not as an interrupted one.
 * - A call's `queue` watcher hears `taken` when a worker claims its attempt (before that
 *   worker's poll answers, when it polled this process), and `waiting` (with when a worker that
 *   could take it last polled here) when no poll takes it at once.
 * - A held poll is woken by a task queued in this process without delay, by one queued in
 *   another through the store's notifier; an answer reaches the call the same ways.
 * - Each commit costs every call in the process a flush, so a call spends as few as it can: its
 *   first attempt is staged (`stage`) and written by the append that schedules the call, claimed
 *   there for a poll held here that may take it (answered when the call is sent, once that commit
 *   is durable); another attempt is queued by `call`, and a poll held here that may take it
 *   claims in the commit that queues it; a worker's answer to a call waiting here settles the call at once
 *   (its journal makes the outcome durable; the store only forgets the task); the removal of a
 *   task done with is written with this process's next write, or within `REMOVAL_DELAY_MS`.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { HostTask, JsonValue, ToolFailure } from "@tapedeck/protocol";
import { systemClock, type Clock } from "../clock.js";
import { toolsetChain } from "../secrets/toolset-chain.js";
import {
  audienceMatches,
  HOST_TASKS_TOPIC,
  hostTaskWaiterTopic,
  toolMatcher,
  type HostTaskAnswer,
  type HostTaskAudience,
  type HostTaskFilter,
  type HostTaskRecord,
  type LeaseAnswer,
  type NewHostTask,
  type StagedHostTask,
} from "../store/host-task-store.js";
import type { Store } from "../store/store.js";
import { HostTaskArgs } from "./host-task-args.js";
import { PollTimes } from "./poll-times.js";
import {
  isSuspension,
  type ResumedCall,
  type StagedAttempt,
  type StagedCallRequest,
  type ToolCallRequest,
  type ToolOutcome,
  type ToolSource,
} from "./tool-source.js";

/** A task as a worker sees it (the wire type, shared with the SDK). */
export type { HostTask, LeaseAnswer };
export { toolMatcher };

export interface PollRequest {
  /** The tools the worker implements: `group.name`, or `group.*` for a whole group. */
  readonly tools: readonly string[];
  /** How long to hold the poll when no task is waiting, ms (at most `MAX_POLL_MS`). */
  readonly waitMs: number;
  /** At most this many tasks (default 1). */
  readonly max?: number;
  /** Ends the poll early (the worker's HTTP request closed). */
  readonly signal?: AbortSignal;
  /** Only calls of runs in this namespace. */
  readonly namespace?: string;
  /** Only calls of runs carrying every one of these labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Only calls of runs on this toolset, or on a toolset derived from it. */
  readonly toolset?: string;
}

export interface HostTaskQueueOptions {
  /** Lease and poll times. Default: the system clock. */
  readonly clock?: Clock;
  /** Who may claim a run's calls. Default: the run's namespace, labels and toolset chain, read from the store. */
  readonly audience?: (runId: string) => Promise<HostTaskAudience | undefined>;
  /** Hears what should never happen (a store write in the background that failed). */
  readonly onFault?: (error: unknown) => void;
  /** Seals the arguments of tasks whose tool has `sensitiveParams` while they wait in the store. Default: a key of this queue's own (tasks open only in this process). */
  readonly args?: HostTaskArgs;
}

/** The longest a poll is held: long enough to spare requests, short enough for proxies. */
export const MAX_POLL_MS = 30_000;

/** How long a task done with may wait for a write to be removed with: short, so the store does not keep what no one needs. */
const REMOVAL_DELAY_MS = 1_000;

/** The runs whose audience is kept for staging (`stage` needs it at once): the runs calling lately. */
const AUDIENCES_KEPT = 1_024;

/** A call of this process waiting for its task's outcome. */
interface Waiting {
  readonly request: ToolCallRequest;
  readonly taskId: string;
  readonly settle: (outcome: ToolOutcome) => void;
  /** A worker claimed it (the watcher heard `taken`). */
  taken: boolean;
  leaseUntil?: number;
  cancelLeaseTimer?: () => void;
}

/** A poll held here until tasks come, its time is up, or it is aborted. */
interface HeldPoll {
  readonly filter: HostTaskFilter;
  readonly matches: (tool: string) => boolean;
  readonly max: number;
  /**
   * Its next pass claims without reading first: a poll that does not wait (it must see calls
   * queued in this very turn), or one a call of this process is queued for (so that the claim
   * shares the commit that queues it).
   */
  force: boolean;
  done: boolean;
  /** Tasks staged claimed for it (`stage`), at most `max`: it gets them once their calls are sent, and claims nothing else meanwhile. */
  readonly reserved: Set<HostTaskRecord>;
  /** Those of them whose calls are sent: handed over together, after the turn that sends them. */
  readonly sent: HostTaskRecord[];
  readonly finish: (tasks: HostTaskRecord[]) => void;
}

/** A first attempt staged (`stage`): its task is written by the append that schedules it; `call` picks it up. */
interface Staged {
  readonly record: HostTaskRecord;
  /** The held poll it was claimed for in that commit. */
  readonly poll?: HeldPoll;
}

type PollWho = Omit<HostTaskFilter, "tools">;

/** What a worker's key or token reaches: the runs of a namespace, carrying these labels. */
export type Reach = Pick<HostTaskFilter, "namespace" | "labels">;

export class HostTaskQueue implements ToolSource {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #audience: (runId: string) => Promise<HostTaskAudience | undefined>;
  readonly #onFault: (error: unknown) => void;
  readonly #args: HostTaskArgs;
  /** This process, as the waiter of the tasks it queues (`hostTaskWaiterTopic`). */
  readonly #waiter = `${hostname()}/${process.pid}/${randomBytes(6).toString("hex")}`;
  readonly #waiting = new Map<string, Waiting>();
  readonly #polls = new Set<HeldPoll>();
  readonly #pollTimes: PollTimes<PollWho>;
  /** Tasks a poll here claimed in the commit that queued them, before their call was waiting here (`call` takes them). */
  readonly #claimedEarly = new Map<string, HostTaskRecord>();
  /** First attempts staged with the appends that schedule them, by `key#attempt`, until their `call` (or `drop`). */
  readonly #staged = new Map<string, Staged>();
  /** The audiences of the runs that called lately (they never change): `stage` must have one at once. */
  readonly #audiences = new Map<string, HostTaskAudience>();
  /**
   * Tasks whose outcome their call took, to be removed from the store with this queue's next
   * write (the next call's task, most often) or within `REMOVAL_DELAY_MS`: a removal of its own
   * would cost every call a commit. Until then a task sits in the store done with; a crash
   * leaves it to the run's end, which gives up every task of the run.
   */
  readonly #removals = new Set<string>();
  #removalTimer: NodeJS.Timeout | undefined;
  #stopHearingAnswers: (() => void) | undefined;
  #stopHearingTasks: (() => void) | undefined;
  /** Offer passes run one after another; a pass not yet started serves everyone who asks meanwhile. */
  #offers = new Passes();
  /** Likewise for looking at this process's tasks in the store. */
  #syncs = new Passes();
  #closed = false;

  constructor(store: Store, options: HostTaskQueueOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#audience = options.audience ?? ((runId) => storedAudience(store, runId));
    this.#onFault = options.onFault ?? (() => {});
    this.#args = options.args ?? new HostTaskArgs(ephemeralKey());
    this.#pollTimes = new PollTimes(this.#clock);
  }

  /** Tasks queued or claimed in the store (of every process sharing it): for tests and health. */
  async pending(): Promise<{ readonly queued: number; readonly claimed: number }> {
    const tasks = await this.#store.hostTasks.list({ states: ["queued", "claimed"], limit: Number.MAX_SAFE_INTEGER });
    return { queued: tasks.filter((t) => t.state === "queued").length, claimed: tasks.filter((t) => t.state === "claimed").length };
  }

  /**
   * Stages the first attempt of a call being scheduled (see `ToolSource.stage`): its task, for the
   * append of its `call.scheduled` entry to write, claimed in that commit by a poll held here
   * that may take it. The removals waiting for a write are submitted now, in the same turn, so
   * they share that commit. Nothing is staged for a run whose audience this queue has not read
   * yet (its first call here queues its task itself).
   */
  stage(request: StagedCallRequest): StagedAttempt | undefined {
    const audience = this.#audiences.get(request.runId);
    if (this.#closed || audience === undefined) return undefined;
    const tool = `${request.tool.group}.${request.tool.name}`;
    const now = this.#clock.now();
    const task = this.#newTask(request, tool, audience, now);
    const poll = [...this.#polls].find(
      (held) => !held.done && held.reserved.size + held.sent.length < held.max && held.matches(tool) && audienceMatches(held.filter, audience),
    );
    const claim = poll && { lease: randomBytes(16).toString("base64url"), leaseUntil: now + request.tool.policy.heartbeatTimeoutMs };
    const staged: StagedHostTask = claim ? { ...task, claim } : task;
    const record: HostTaskRecord = claim ? { ...task, state: "claimed", ...claim } : { ...task, state: "queued" };
    poll?.reserved.add(record);
    const key = attemptKey(request);
    this.#staged.set(key, { record, ...(poll ? { poll } : {}) });
    this.#flushRemovals();
    const drop = (): void => {
      if (this.#staged.get(key)?.record !== record) return;
      this.#staged.delete(key);
      // The poll waits on for other work (a task written nonetheless lapses with its lease).
      poll?.reserved.delete(record);
    };
    return { task: staged, drop };
  }

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    if (this.#closed) return { kind: "interrupted", reason: "the engine closed" };
    const tool = `${request.tool.group}.${request.tool.name}`;
    const staged = this.#staged.get(attemptKey(request));
    if (staged) {
      // Written by the append that scheduled the call, which is durable now: nothing to write.
      this.#staged.delete(attemptKey(request));
      return this.#wait(request, tool, this.#handOver(staged), staged.record.audience, undefined);
    }
    let audience: HostTaskAudience | undefined;
    try {
      audience = await this.#audience(request.runId);
    } catch (error) {
      return { kind: "interrupted", reason: `the run ${request.runId} could not be read to queue the call: ${describe(error)}` };
    }
    if (audience === undefined) return { kind: "interrupted", reason: `there is no run ${request.runId} to queue the call for` };
    this.#keepAudience(request.runId, audience);
    if (request.signal.aborted) return { kind: "interrupted", reason: "withdrawn" };
    // Polls held here that could take the call claim in the commit that queues it: one commit, not two.
    const local = [...this.#polls].filter((held) => !held.done && !spokenFor(held) && held.matches(tool) && audienceMatches(held.filter, audience));
    for (const held of local) held.force = true;
    let record: HostTaskRecord;
    let offered: Promise<void> | undefined;
    try {
      const queued = this.#store.hostTasks.enqueue(this.#newTask(request, tool, audience, this.#clock.now()));
      this.#flushRemovals();
      if (local.length > 0) offered = this.#offer();
      record = await queued;
    } catch (error) {
      return { kind: "interrupted", reason: `the call could not be queued for a worker: ${describe(error)}` };
    }
    return this.#wait(request, tool, record, audience, offered);
  }

  /**
   * A staged task whose call is sent (its commit is durable): the poll it was claimed for gets
   * it, with the others of it sent in the same turn; if that poll ended, it goes back to the queue.
   */
  #handOver(staged: Staged): HostTaskRecord {
    const { record, poll } = staged;
    if (!poll?.reserved.delete(record)) return record;
    if (poll.done) {
      this.#giveBack([record]);
      const { lease: _lease, leaseUntil: _until, ...queued } = record;
      return { ...queued, state: "queued" };
    }
    poll.sent.push(record);
    if (poll.sent.length === 1) {
      queueMicrotask(() => {
        const tasks = poll.sent.splice(0);
        if (poll.done) this.#giveBack(tasks);
        else poll.finish(tasks);
      });
    }
    return record;
  }

  /** Tasks claimed for a poll that ended before it got them: nobody saw them, so they go back to the queue. */
  #giveBack(tasks: readonly HostTaskRecord[]): void {
    for (const task of tasks) this.#background(this.#store.hostTasks.release(task.id, task.lease!));
  }

  #newTask(request: StagedCallRequest, tool: string, audience: HostTaskAudience, now: number): NewHostTask {
    const id = `task_${randomBytes(12).toString("base64url")}`;
    return {
      id,
      runId: request.runId,
      seq: request.seq,
      attempt: request.attempt,
      tool,
      args: this.#args.seal(request.tool, id, request.args),
      idempotencyKey: request.idempotencyKey,
      traceparent: request.traceparent,
      heartbeatTimeoutMs: request.tool.policy.heartbeatTimeoutMs,
      audience,
      waiter: this.#waiter,
      createdAt: now,
    };
  }

  /** Keeps a run's audience for `stage`, the runs that called last kept. */
  #keepAudience(runId: string, audience: HostTaskAudience): void {
    this.#audiences.delete(runId);
    this.#audiences.set(runId, audience);
    if (this.#audiences.size > AUDIENCES_KEPT) this.#audiences.delete(this.#audiences.keys().next().value!);
  }

  /** Waits for the outcome of the task `record` of the call (queued or claimed); `offered`: the offer pass to the polls held here that may take it. */
  #wait(request: ToolCallRequest, tool: string, record: HostTaskRecord, audience: HostTaskAudience, offered: Promise<void> | undefined): Promise<ToolOutcome> {
    return new Promise<ToolOutcome>((resolve) => {
      const waiting: Waiting = {
        request,
        taskId: record.id,
        taken: false,
        settle: (outcome) => {
          waiting.cancelLeaseTimer?.();
          if (this.#waiting.get(record.id) === waiting) this.#waiting.delete(record.id);
          this.#hearAnswers();
          resolve(outcome);
        },
      };
      this.#waiting.set(record.id, waiting);
      this.#hearAnswers();
      // Claimed by a poll of this process in the commit that queued it, before the call was waiting here.
      const early = this.#claimedEarly.get(record.id);
      this.#claimedEarly.delete(record.id);
      request.signal.addEventListener("abort", () => this.#abandon(waiting), { once: true });
      if (request.signal.aborted) return this.#abandon(waiting);
      if (early) this.#apply(waiting, early);
      if (record.state !== "queued") return this.#apply(waiting, record);
      const waits = (): void => {
        if (this.#waiting.get(record.id) === waiting && !waiting.taken)
          request.queue?.waiting(this.#pollTimes.last(tool, (who) => audienceMatches(who, audience)));
      };
      // Offered to the polls held here first: a call a waiting worker takes at once never waits.
      if (offered) void offered.then(waits);
      else waits();
    });
  }

  /**
   * Whether the attempt a stopped engine sent still stands here (its task queued, held by a
   * worker, or answered): the resumed run then sends that same attempt, and `call` picks the
   * task up where it is. A task that lapsed or was withdrawn does not stand.
   */
  async resumes(call: ResumedCall): Promise<boolean> {
    const task = await this.#store.hostTasks.find(call.runId, call.idempotencyKey, call.attempt);
    return task !== undefined && (task.state === "queued" || task.state === "claimed" || task.state === "answered");
  }

  /** Resolves with up to `max` claimed tasks: at once if some wait, else when one arrives or after `waitMs` (empty). */
  poll(request: PollRequest): Promise<HostTask[]> {
    const filter: HostTaskFilter = {
      tools: request.tools,
      ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
      ...(request.labels === undefined || Object.keys(request.labels).length === 0 ? {} : { labels: request.labels }),
      ...(request.toolset === undefined ? {} : { toolset: request.toolset }),
    };
    const matches = toolMatcher(request.tools);
    const { tools: _, ...who } = filter;
    const key = JSON.stringify([filter.namespace ?? null, Object.entries(filter.labels ?? {}).sort(), [...request.tools].sort(), filter.toolset ?? null]);
    const polled = this.#pollTimes.record(key, who, matches);
    const max = Math.max(1, request.max ?? 1);
    return new Promise<HostTask[]>((resolve) => {
      let cancelTimer = (): void => {};
      const stop = (): void => held.finish([]);
      const held: HeldPoll = {
        filter,
        matches,
        max,
        force: request.waitMs <= 0,
        done: false,
        reserved: new Set(),
        sent: [],
        finish: (tasks) => {
          if (held.done) return;
          held.done = true;
          // A held poll was polling until it ended: that is when a worker last polled.
          polled();
          cancelTimer();
          request.signal?.removeEventListener("abort", stop);
          this.#polls.delete(held);
          this.#hearTasks();
          resolve(tasks.map((task) => view(task, this.#args)));
        },
      };
      if (this.#closed || request.signal?.aborted) return held.finish([]);
      request.signal?.addEventListener("abort", stop, { once: true });
      if (request.waitMs > 0) cancelTimer = this.#clock.setTimer(this.#clock.now() + Math.min(request.waitMs, MAX_POLL_MS), stop);
      this.#polls.add(held);
      this.#hearTasks();
      void this.#offer().then(() => {
        if (request.waitMs <= 0) held.finish([]);
      });
    });
  }

  /**
   * Extends the lease of a claimed task. `cancelled`: the run no longer wants it (stop working);
   * `lost`: the lease is not (or no longer) this one, or the task is not `within` what the
   * caller may reach (its runs' namespace and labels), as for a task that does not exist.
   */
  async heartbeat(taskId: string, lease: string, within?: Reach): Promise<LeaseAnswer> {
    if (this.#removals.has(taskId) || !(await this.#reaches(taskId, within))) return "lost";
    const now = this.#clock.now();
    const answer = await this.#store.hostTasks.heartbeat(taskId, lease, now);
    const waiting = this.#waiting.get(taskId);
    if (answer === "ok" && waiting) this.#armLease(waiting, now + waiting.request.tool.policy.heartbeatTimeoutMs);
    return answer;
  }

  /** The worker's result (`within` as for `heartbeat`). */
  complete(taskId: string, lease: string, value: JsonValue, within?: Reach): Promise<LeaseAnswer> {
    return this.#answer(taskId, lease, { kind: "result", value }, within);
  }

  /** The worker's failure: the script gets a `ToolError` with it; never retried (`within` as for `heartbeat`). */
  fail(taskId: string, lease: string, failure: ToolFailure, within?: Reach): Promise<LeaseAnswer> {
    return this.#answer(taskId, lease, { kind: "failure", failure }, within);
  }

  /**
   * Ends every held poll (empty) and stops waiting for the calls of this process (they end
   * interrupted here). Their tasks stay in the store as they are: the engine that resumes the
   * runs picks them up.
   */
  close(): Promise<void> {
    this.#closed = true;
    for (const held of [...this.#polls]) held.finish([]);
    for (const waiting of [...this.#waiting.values()]) waiting.settle({ kind: "interrupted", reason: "the engine closed" });
    this.#stopHearingAnswers?.();
    this.#stopHearingTasks?.();
    this.#stopHearingAnswers = this.#stopHearingTasks = undefined;
    this.#claimedEarly.clear();
    this.#staged.clear();
    this.#flushRemovals();
    return Promise.resolve();
  }

  async #answer(taskId: string, lease: string, outcome: HostTaskAnswer, within: Reach | undefined): Promise<LeaseAnswer> {
    // Answered here already, its removal still to be written: answered once.
    if (this.#removals.has(taskId) || !(await this.#reaches(taskId, within))) return "lost";
    if (this.#waiting.has(taskId)) {
      // The call waits in this process: the answer goes to it (and so to its journal) at once,
      // and the store only forgets the task; a commit of the answer would reach no one else.
      const [task] = await this.#store.hostTasks.get([taskId]);
      const waiting = this.#waiting.get(taskId);
      if (waiting && task?.state === "claimed" && task.lease === lease) {
        this.#take(waiting, outcome);
        return "ok";
      }
    }
    const answer = await this.#store.hostTasks.answer(taskId, lease, outcome, this.#clock.now());
    const waiting = this.#waiting.get(taskId);
    if (answer === "ok" && waiting) this.#take(waiting, outcome);
    return answer;
  }

  /** Whether the task is one a caller limited to `within` may report on (a task that does not exist: let the store say `lost`). */
  async #reaches(taskId: string, within: Reach | undefined): Promise<boolean> {
    if (within === undefined || (within.namespace === undefined && within.labels === undefined)) return true;
    const [task] = await this.#store.hostTasks.get([taskId]);
    return task === undefined || audienceMatches(within, task.audience);
  }

  /** What the task of a call waiting here has come to. */
  #apply(waiting: Waiting, task: HostTaskRecord): void {
    switch (task.state) {
      case "queued":
        return;
      case "withdrawn":
        return this.#forget(waiting, { kind: "interrupted", reason: "withdrawn" });
      case "claimed":
        if (!waiting.taken) {
          waiting.taken = true;
          waiting.request.queue?.taken();
        }
        if (task.leaseUntil !== undefined && task.leaseUntil !== waiting.leaseUntil) this.#armLease(waiting, task.leaseUntil);
        return;
      case "answered":
        return this.#take(waiting, task.answer ?? { kind: "failure", failure: { code: "tool_error", message: "The worker's answer was lost." } });
      case "lapsed": {
        const timeout = waiting.request.tool.policy.heartbeatTimeoutMs;
        this.#forget(waiting, { kind: "interrupted", reason: `the worker missed its heartbeat (no sign of life for ${timeout} ms)` });
      }
    }
  }

  /** The call's outcome: settled here, its task removed from the store. */
  #take(waiting: Waiting, answer: HostTaskAnswer): void {
    this.#forget(waiting, answer.kind === "result" ? { kind: "result", value: answer.value } : { kind: "failure", failure: answer.failure });
  }

  #forget(waiting: Waiting, outcome: ToolOutcome): void {
    if (this.#waiting.get(waiting.taskId) !== waiting) return;
    waiting.settle(outcome);
    this.#removals.add(waiting.taskId);
    if (!this.#closed) this.#removalTimer ??= setTimeout(() => this.#flushRemovals(), REMOVAL_DELAY_MS).unref();
  }

  /** Removes the tasks whose outcomes were taken (see `#removals`). */
  #flushRemovals(): void {
    clearTimeout(this.#removalTimer);
    this.#removalTimer = undefined;
    if (this.#removals.size === 0) return;
    const ids = [...this.#removals];
    this.#removals.clear();
    this.#background(this.#store.hostTasks.remove(ids));
  }

  /** The attempt's signal aborted: withdrawn, unless the run only stops here (then its task is kept for the resumed run). */
  #abandon(waiting: Waiting): void {
    if (this.#waiting.get(waiting.taskId) !== waiting) return;
    if (!isSuspension(waiting.request.signal.reason)) this.#background(this.#store.hostTasks.withdraw(waiting.taskId));
    waiting.settle({ kind: "interrupted", reason: "withdrawn" });
  }

  /** A missed heartbeat interrupts the attempt: the worker is presumed dead. Checked in the store, where a heartbeat through another process may have extended it. */
  #armLease(waiting: Waiting, until: number): void {
    waiting.cancelLeaseTimer?.();
    waiting.leaseUntil = until;
    waiting.cancelLeaseTimer = this.#clock.setTimer(until, () => {
      waiting.cancelLeaseTimer = undefined;
      void this.#store.hostTasks.expire(this.#clock.now()).then(
        (lapsed) => {
          for (const task of lapsed) {
            const mine = this.#waiting.get(task.id);
            if (mine) this.#apply(mine, task);
          }
          // Not lapsed: extended elsewhere; what the store says re-arms it.
          if (this.#waiting.get(waiting.taskId) === waiting) this.#sync();
        },
        (error: unknown) => this.#onFault(error),
      );
    });
  }

  /**
   * Claims for the held polls what is queued and each may see, oldest poll first. One read tells
   * which polls could get something, so a poll or a wake-up that brings nothing costs no write;
   * a poll marked `force` claims without it. The claims of a pass are issued together: they
   * share a commit.
   */
  #offer(): Promise<void> {
    return this.#offers.run(async () => {
      if (this.#polls.size === 0 || this.#closed) return;
      const queued = await this.#store.hostTasks.list({ states: ["queued"], limit: 1000 });
      const polls = [...this.#polls].filter(
        (held) =>
          !held.done && !spokenFor(held) && (held.force || queued.some((task) => held.matches(task.tool) && audienceMatches(held.filter, task.audience))),
      );
      const now = this.#clock.now();
      const claims = await Promise.all(
        polls.map((held) => {
          held.force = false;
          return this.#store.hostTasks.claim(held.filter, held.max, now);
        }),
      );
      polls.forEach((held, i) => {
        const claimed = claims[i] ?? [];
        for (const task of claimed) {
          const waiting = this.#waiting.get(task.id);
          if (waiting) this.#apply(waiting, task);
          else if (task.waiter === this.#waiter) this.#claimedEarly.set(task.id, task);
        }
        if (claimed.length === 0) return;
        if (!held.done) return held.finish(claimed);
        // The poll ended while it claimed: nobody saw these tasks, so no worker holds them.
        this.#giveBack(claimed);
      });
    }, this.#onFault);
  }

  /** Looks in the store at the tasks of this process's calls (claimed, answered or lapsed elsewhere). */
  #sync(): void {
    void this.#syncs.run(async () => {
      const ids = [...this.#waiting.keys()];
      if (ids.length === 0) return;
      const tasks = new Map((await this.#store.hostTasks.get(ids)).map((task) => [task.id, task]));
      for (const id of ids) {
        const waiting = this.#waiting.get(id);
        if (!waiting) continue;
        const task = tasks.get(id);
        if (task) this.#apply(waiting, task);
        else this.#forget(waiting, { kind: "interrupted", reason: "its task is no longer in the queue" });
      }
    }, this.#onFault);
  }

  /** Hears the answers to this process's calls while it has some. */
  #hearAnswers(): void {
    if (this.#waiting.size > 0 && !this.#closed)
      this.#stopHearingAnswers ??= this.#store.notifier.subscribe(hostTaskWaiterTopic(this.#waiter), () => this.#sync());
    else {
      this.#stopHearingAnswers?.();
      this.#stopHearingAnswers = undefined;
    }
  }

  /** Hears new tasks while polls are held here. */
  #hearTasks(): void {
    if (this.#polls.size > 0 && !this.#closed) this.#stopHearingTasks ??= this.#store.notifier.subscribe(HOST_TASKS_TOPIC, () => void this.#offer());
    else {
      this.#stopHearingTasks?.();
      this.#stopHearingTasks = undefined;
    }
  }

  #background(write: Promise<void>): void {
    write.catch((error: unknown) => this.#onFault(error));
  }
}

/**
 * Passes of some work that must not overlap (claims for held polls, looks at the store): each
 * runs after the one before; a pass asked for while another runs waits, and every ask made
 * before it starts is served by it, so asking often costs one pass.
 */
class Passes {
  #tail: Promise<void> = Promise.resolve();
  #next: Promise<void> | undefined;

  run(pass: () => Promise<void>, onFault: (error: unknown) => void): Promise<void> {
    if (this.#next) return this.#next;
    const next = this.#tail.then(() => {
      this.#next = undefined;
      return pass().catch(onFault);
    });
    this.#next = this.#tail = next;
    return next;
  }
}

/** A run's audience as the store has it: its namespace, labels, and toolset with those it derives from. */
async function storedAudience(store: Store, runId: string): Promise<HostTaskAudience | undefined> {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  return {
    ...(run.namespace === undefined ? {} : { namespace: run.namespace }),
    ...(run.labels === undefined ? {} : { labels: run.labels }),
    toolsets: await toolsetChain(store, run.toolsetId),
  };
}

/** Whether a held poll has tasks staged for it (see `HeldPoll.reserved`): it takes no others. */
function spokenFor(held: HeldPoll): boolean {
  return held.reserved.size > 0 || held.sent.length > 0;
}

/** An attempt of a call or of a sub-call (which shares its call's seq, not its key). */
function attemptKey(attempt: { readonly idempotencyKey: string; readonly attempt: number }): string {
  return `${attempt.idempotencyKey}#${attempt.attempt}`;
}

function view(task: HostTaskRecord, args: HostTaskArgs): HostTask {
  return {
    id: task.id,
    tool: task.tool,
    args: args.open(task.id, task.args),
    idempotencyKey: task.idempotencyKey,
    runId: task.runId,
    seq: task.seq,
    attempt: task.attempt,
    traceparent: task.traceparent,
    lease: task.lease!,
    heartbeatTimeoutMs: task.heartbeatTimeoutMs,
  };
}

/** A random key kept by the caller: what a queue without a master key seals with. */
function ephemeralKey(): () => Buffer {
  const key = randomBytes(32);
  return () => key;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
