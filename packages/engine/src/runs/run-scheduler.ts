import {
  decisionEvent,
  needsDecision,
  terminalStatuses,
  type Decision,
  type JournalEntry,
  type JsonValue,
  type RunEnd,
  type RunEvent,
  type RunWait,
} from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import { EngineError } from "../errors.js";
import { MAX_HOST_FAULTS } from "../limits.js";
import type { SandboxFactory } from "../sandbox/sandbox.js";
import type { CompiledScript } from "../script/compile.js";
import type { CredentialScope } from "../secrets/credential.js";
import type { ToolSource } from "../sources/tool-source.js";
import { isLeaseLost, type RunCaller, type RunRecord, type RunRequest, type Store } from "../store/store.js";
import type { LoadedToolset } from "../toolset/loaded-toolset.js";
import type { ToolsetCatalog } from "../toolset/toolset-catalog.js";
import { valueProblem } from "../util/value-bounds.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import { ChildRuns } from "./child-runs.js";
import { CredentialRenewal } from "./credential-renewal.js";
import type { EngineEvent } from "./engine-events.js";
import { countsAsHostFault, describeFault } from "./host-faults.js";
import { endRecord, RunExecutor, type ExecutionResult, type ExecutorLimits } from "./run-executor.js";
import type { RunHost } from "./run-host.js";
import { RunLeases } from "./run-leases.js";
import { RunTakeover } from "./run-takeover.js";
import { RunWaiters } from "./run-waiters.js";
import { WakeTimer } from "./wake-timer.js";
import { createWebhook } from "./webhooks.js";

/**
 * The run scheduler (DESIGN §2): which runs execute in this engine, and when. It starts
 * executions, wakes parked runs (their timers, a signal, a decision, a child's end, a renewed
 * credential), parks them, applies the requests other processes leave for the runs it holds,
 * cancels, and tells waiters and listeners how each execution stopped. One execution of a run is
 * a `RunExecutor`; this file decides when there is one.
 *
 * Invariants:
 * - A run executes in at most one executor of one process at a time: the executors map, checked
 *   and set without an await, plus the store's lease (`run-leases.ts`); requests for a run held
 *   elsewhere go to its holder through the store.
 * - What a run did is durable before anyone hears of it: waiters, listeners and callers are told
 *   after the commit that records the change (with `recordEvents`, the events are in that commit).
 * - A parked run holds no sandbox and is woken by replay: by its timer (one `WakeTimer` for all),
 *   a signal, a decision, a child's end or a renewed credential. Two wake-ups of one run start one
 *   execution (`#waking`).
 * - A run is woken here only while this engine wakes runs (`wake`): all of the store's (a server,
 *   which also rescans for runs other processes parked), only those it holds, or none.
 * - An execution that fails for a fault of the host is counted against the run (`host-faults.ts`)
 *   and the run is left `running`, its lease released, for `resume` here or elsewhere.
 */

/** Direct tool sessions, whose records are runs' (`Engine.direct`): which records are theirs, and how their calls are decided. */
export interface SessionDecisions {
  owns(runId: string): boolean;
  decide(runId: string, seq: number, decision: Decision, reason: string | undefined): Promise<DecidedWhere>;
}

/** Where a decision (`Engine.approve`, `reject`) is acted on, when not in this process as it returns. */
export interface DecidedWhere {
  /** Another live process holds the run and journals the decision there (it reads the request left for it). */
  readonly heldBy?: string;
  /**
   * This process lacks a source the run needs (a host tool, and no host module here): the
   * decision is journaled here, and the call is sent (the run goes on) in the process that next
   * holds the run — a server wakes it, a direct session's next request does. Says what is missing.
   */
  readonly unsent?: string;
}

/** How often an engine that wakes every run looks for runs other processes parked. */
const WAKE_RESCAN_MS = 5_000;

export interface RunSchedulerOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly sandboxes: SandboxFactory;
  /** Where calls go. */
  readonly source: ToolSource;
  readonly limits: ExecutorLimits;
  /** The loaded toolsets, their observed shapes and the checker. */
  readonly catalog: ToolsetCatalog;
  /** Which parked runs this engine wakes (`EngineOptions.wake`). */
  readonly wake: boolean | "owned";
  /** Whether run events are written into the store in the commit that makes them happen (`EngineOptions.recordEvents`). */
  readonly recordEvents: boolean;
  /** Where run-bound webhook URLs point, without a trailing slash. */
  readonly webhookBaseUrl: string;
  /** Tells the engine's listeners. */
  readonly emit: (event: EngineEvent) => void;
  /** How long a run's lease holds without renewal (`EngineOptions.leaseMs`). */
  readonly leaseMs?: number;
}

export class RunScheduler implements RunHost {
  readonly store: Store;
  readonly clock: Clock;
  readonly #options: RunSchedulerOptions;
  readonly #catalog: ToolsetCatalog;
  /** The execution of each run executing here, and how it stops (ends or parks). */
  readonly #executors = new Map<string, { readonly executor: RunExecutor; readonly stopped: Promise<unknown> }>();
  /** Parked runs being woken, so two wake-ups of one run start one execution. */
  readonly #waking = new Map<string, Promise<void>>();
  readonly #waiters = new RunWaiters();
  readonly #leases: RunLeases;
  /** Decides the calls of direct tool sessions (`Engine.direct`), whose records are runs'. */
  #sessions: SessionDecisions | undefined;
  /** The child runs of `workflows.<name>` calls. */
  readonly #children: ChildRuns;
  readonly #renewal: CredentialRenewal;
  #wake: WakeTimer | undefined;
  #rescan: NodeJS.Timeout | undefined;
  /** With `wake: true`, takes over the runs of engines that are gone. */
  #takeover: RunTakeover | undefined;
  #closed = false;

  constructor(options: RunSchedulerOptions) {
    this.#options = options;
    this.store = options.store;
    this.clock = options.clock;
    this.#catalog = options.catalog;
    this.#leases = new RunLeases(this, options.leaseMs);
    this.#children = new ChildRuns(this);
    this.#renewal = new CredentialRenewal(this);
    if (options.wake !== false)
      this.#wake = new WakeTimer(
        this.clock,
        (now) => this.#wakeDue(now),
        (error) => this.onError(error),
      );
  }

  /** Begins waking runs: with `wake: true`, those overdue at once, then every run of the store when due, rescanning for runs other processes parked. */
  async open(): Promise<void> {
    if (this.#options.wake !== true) return;
    const store = this.store;
    this.#wake?.schedule(await store.nextWakeAt());
    // Runs parked by other processes (a detached `tapedeck run`) are in the store, not in this
    // engine's timer: look for them every few seconds (wall-clock time, unref'd).
    this.#rescan = setInterval(() => {
      store.nextWakeAt().then(
        (next) => this.#wake?.schedule(next),
        () => {},
      );
    }, WAKE_RESCAN_MS);
    this.#rescan.unref();
    this.#takeover = new RunTakeover({
      store,
      leases: this.#leases,
      resumeStopped: (run) => this.resumeStopped(run),
      heldParked: (run) => this.#heldParked(run),
      onError: (error) => this.onError(error),
    });
    this.#takeover.start();
  }

  /** The leases this engine holds: direct tool sessions hold theirs with the runs'. */
  get leases(): RunLeases {
    return this.#leases;
  }

  /** Where decisions on direct tool sessions' calls go (by the scheduler's `decide`, and the requests other processes leave). */
  serveSessions(sessions: SessionDecisions): void {
    this.#sessions = sessions;
  }

  /** Validates the inputs, outputs and signal payloads of workflows against their schemas. */
  get workflowSchemas(): SchemaValidator {
    return this.#children.schemas;
  }

  /** A run's record. Throws `not_found`. */
  async run(id: string): Promise<RunRecord> {
    const run = await this.store.getRun(id);
    if (!run) throw new EngineError("not_found", `No run ${id}.`);
    return run;
  }

  /** Starts executing a run just created; resolves with its end. */
  start(run: RunRecord, toolset: LoadedToolset): Promise<RunEnd> {
    const end = this.#waiters.end(run.id);
    this.execute(run, toolset);
    return end;
  }

  /** The end of a run an idempotent start named: as `end()` gives it, awaited here for a run another engine executes. */
  existing(runId: string): Promise<RunEnd> {
    const end = this.end(runId).then((ended) => ended ?? this.#waiters.end(runId));
    // Like every waiter: nobody may await it, and the engine may close under it.
    end.catch(() => {});
    return end;
  }

  /** `Engine.resume`. */
  async resume(runId?: string): Promise<{ runId: string; end: Promise<RunEnd> }[]> {
    const runs = runId
      ? [await this.run(runId)]
      : [...(await this.store.listRuns({ status: ["running"], limit: 10_000 })), ...(await this.store.listRuns({ wakeBy: this.clock.now(), limit: 10_000 }))];
    const resumed: { runId: string; end: Promise<RunEnd> }[] = [];
    for (const run of runs) {
      if (!terminalStatuses.includes(run.status) && this.#leases.heldElsewhere(run) && !this.#executors.has(run.id)) {
        // Another live process executes or keeps it: not taken over.
        if (runId !== undefined)
          throw new EngineError(
            "conflict",
            `Run ${run.id} is held by another live process (${run.owner?.id}); it goes on there. Signals, decisions and cancels sent from here reach it.`,
          );
        continue;
      }
      if (terminalStatuses.includes(run.status)) {
        resumed.push({ runId: run.id, end: Promise.resolve((await this.end(run.id))!) });
        continue;
      }
      const loaded = await this.#catalog.get(run.toolsetId);
      if (!this.#executors.has(run.id)) this.#catalog.checkSources(loaded.pinned);
      const end = this.#waiters.end(run.id);
      if (run.status === "waiting") await this.#unpark(run.id);
      else this.execute(run, loaded);
      resumed.push({ runId: run.id, end });
    }
    return resumed;
  }

  /** `Engine.cancel`. */
  async cancel(runId: string, reason: string): Promise<RunEnd> {
    this.#open();
    for (let live = this.#executors.get(runId); live; live = this.#executors.get(runId)) {
      const result = await live.executor.cancel(reason);
      // The run parked as the cancel arrived: cancel it parked.
      if (result.status !== "waiting") return result;
    }
    const run = await this.run(runId);
    const ended = await this.recordedEnd(run);
    if (ended) return ended;
    const cancelled: RunEnd = { status: "cancelled", reason };
    // A run this engine does not hold is claimed first, unless another live engine holds it as far
    // as this engine can tell: a lease that looks lapsed from here may be live (a loaded holder
    // renews late, a read is answered late), and only the store, at the claim, can tell. A cancel
    // written beside a live holder's execution would race its appends.
    const claimed = !this.#leases.holds(runId) && !this.#leases.heldElsewhere(run) && (await this.#leases.claim(run));
    if (!this.#leases.holds(runId)) {
      // The process holding the run cancels it (promptly: it takes its requests a few times a second).
      await this.store.putRunRequest(runId, { kind: "cancel", reason }, this.clock.now());
      return cancelled;
    }
    try {
      // Read again under the lease: the run may have ended between the first read and the claim.
      const held = await this.run(runId);
      const endedMeanwhile = await this.recordedEnd(held);
      if (endedMeanwhile) return endedMeanwhile;
      await this.#journalCancel(held, cancelled);
      return cancelled;
    } finally {
      if (claimed && !this.#executors.has(runId)) await this.#leases.release(runId);
    }
  }

  /** Ends a run this engine holds and does not execute (parked, or left running by a gone holder) as cancelled. */
  async #journalCancel(run: RunRecord, cancelled: RunEnd): Promise<void> {
    const now = this.clock.now();
    const { event, patch } = endRecord(cancelled, now);
    const events: RunEvent[] = this.#options.recordEvents ? [{ type: "run.ended", runId: run.id, end: cancelled }] : [];
    const wake = run.caller ? { wakeRun: run.caller.runId } : {};
    // Under this engine's lease epoch: refused if another engine took the run meanwhile.
    await this.store.append(
      run.id,
      [{ ...event, index: run.journalLength, at: now }],
      {
        ...patch,
        waits: null,
        wakeAt: null,
        ...wake,
        ...(events.length > 0 ? { events } : {}),
      },
      this.#leases.epoch(run.id),
    );
    this.#report(run.id, cancelled, run.caller);
  }

  /** `Engine.end`. */
  async end(runId: string): Promise<RunEnd | undefined> {
    if (this.#executors.has(runId)) return this.#waiters.end(runId);
    const run = await this.run(runId);
    const ended = await this.recordedEnd(run);
    if (ended) return ended;
    return run.status === "waiting" ? this.#waiters.end(runId) : undefined;
  }

  /** `Engine.settled`. */
  async settled(runId: string, options: { readonly next?: boolean } = {}): Promise<ExecutionResult | undefined> {
    if (this.#executors.has(runId) || this.#waking.has(runId)) return this.#waiters.settled(runId);
    if (options.next === true) {
      const waiting = this.#waiters.settled(runId);
      const run = await this.run(runId);
      if (run.status === "waiting" || this.#executors.has(runId) || this.#waking.has(runId)) return waiting;
      return (await this.recordedEnd(run)) ?? waiting;
    }
    const run = await this.run(runId);
    if (run.status === "waiting") return { status: "waiting", waits: run.waits ?? [], ...(run.wakeAt === undefined ? {} : { wakeAt: run.wakeAt }) };
    return await this.recordedEnd(run);
  }

  /** `Engine.signal`. */
  async signal(
    runId: string,
    name: string,
    payload: JsonValue,
    options: { readonly key?: string } = {},
  ): Promise<{ readonly signalId: number; readonly duplicate: boolean; readonly heldBy?: string }> {
    this.#open();
    if (typeof name !== "string" || name === "")
      throw new EngineError("invalid_request", "A signal needs a name: a non-empty string the script waits for with signal(name).");
    const problem = valueProblem(payload);
    if (problem !== undefined) throw new EngineError("invalid_request", `The signal's payload is refused: ${problem}.`);
    const bytes = jsonBytes(payload);
    if (bytes === undefined)
      throw new EngineError("invalid_request", "The signal's payload is not JSON; send plain data (objects, arrays, strings, numbers, booleans, null).");
    const { maxValueBytes } = this.#options.limits;
    if (bytes > maxValueBytes)
      throw new EngineError("invalid_request", `The signal's payload is ${bytes} bytes; one recorded value may be at most ${maxValueBytes} bytes.`);
    const run = await this.run(runId);
    if (terminalStatuses.includes(run.status)) {
      // A keyed signal sent again after it ended the run (a retried request) was sent: say so.
      const sent = options.key === undefined ? undefined : await this.store.signalByKey(runId, options.key);
      if (sent !== undefined) return { signalId: sent, duplicate: true };
      throw new EngineError("conflict", `Run ${runId} has ended (${run.status}); the signal "${name}" was not sent.`);
    }
    const kept = await this.store.putSignal({ runId, name, payload, at: this.clock.now(), ...(options.key === undefined ? {} : { key: options.key }) });
    const heldBy = kept.duplicate ? undefined : await this.#notify(runId, { kind: "signal", name });
    return { signalId: kept.id, duplicate: kept.duplicate, ...(heldBy === undefined ? {} : { heldBy }) };
  }

  /** `Engine.approve` / `reject`: journals the decision where the run executes (here, woken if parked, or in the process that holds it). */
  async decide(runId: string, seq: number, decision: Decision, reason: string | undefined): Promise<DecidedWhere> {
    this.#open();
    // A direct tool session's record is a run's, but its calls are the session's to decide.
    if (this.#sessions?.owns(runId) === true) return this.#sessions.decide(runId, seq, decision, reason);
    for (;;) {
      let live = this.#executors.get(runId);
      if (!live) {
        const run = await this.run(runId);
        if (!(run.waits ?? []).some((wait) => wait.seq === seq && needsDecision(wait))) {
          throw new EngineError(
            "conflict",
            `Call #${seq} of run ${runId} is not waiting for a decision${terminalStatuses.includes(run.status) ? ` (the run has ended: ${run.status})` : ""}.`,
          );
        }
        if (this.#leases.heldElsewhere(run)) {
          // The process holding the run journals the decision when it reads this request.
          await this.store.putRunRequest(runId, { kind: "decide", seq, decision, ...(reason === undefined ? {} : { reason }) }, this.clock.now());
          return run.owner?.id === undefined ? {} : { heldBy: run.owner.id };
        }
        const loaded = await this.#catalog.get(run.toolsetId);
        const lacking = this.#catalog.sourcesProblem(loaded.pinned);
        if (lacking !== undefined) {
          const left = await this.#decideForLater(run, seq, decision, reason, lacking);
          if (left !== undefined) return left;
          // Another process took the run meanwhile: ask it (or say why not, rather than loop).
          if (this.#leases.heldElsewhere(await this.run(runId))) continue;
          throw new EngineError("conflict", `Run ${runId} could not be claimed here to journal the decision on call #${seq}.`);
        }
        if (run.status === "waiting") await this.#unpark(runId);
        else this.execute(run, loaded);
        live = this.#executors.get(runId);
        if (!live) {
          // Another process took the run between the read and the claim: ask it.
          if (this.#leases.heldElsewhere(await this.run(runId))) continue;
          throw new EngineError("conflict", `Run ${runId} could not be woken here to decide on call #${seq}.`);
        }
      }
      if (await live.executor.decide(seq, decision, reason)) return {};
      await live.stopped;
    }
  }

  /**
   * Journals a decision on a run this process cannot execute (`lacking`: a source its toolset
   * needs is not here) and leaves the run to one that can: the wait is taken from the record,
   * and a parked run is due at once, so the next engine that wakes runs (a server) goes on with
   * it and sends the call. Under the run's lease, so no executor races the append; undefined when
   * another process took the run meanwhile (the caller asks that one).
   */
  async #decideForLater(read: RunRecord, seq: number, decision: Decision, reason: string | undefined, lacking: string): Promise<DecidedWhere | undefined> {
    if (!(await this.#leases.claim(read))) return undefined;
    try {
      const run = await this.run(read.id);
      if (!(run.waits ?? []).some((wait) => wait.seq === seq && needsDecision(wait)))
        throw new EngineError("conflict", `Call #${seq} of run ${run.id} is not waiting for a decision (it was decided meanwhile).`);
      const now = this.clock.now();
      const waits = (run.waits ?? []).filter((wait) => wait.seq !== seq);
      const entry: JournalEntry = { index: run.journalLength, at: now, kind: "call.decided", seq, decision, ...(reason === undefined ? {} : { reason }) };
      await this.store.append(
        run.id,
        [entry],
        {
          updatedAt: now,
          waits: waits.length > 0 ? waits : null,
          ...(run.status === "waiting" ? { wakeAt: now } : {}),
        },
        // Under the lease just claimed: refused if another engine took the run meanwhile.
        this.#leases.epoch(run.id),
      );
      return { unsent: lacking };
    } finally {
      await this.#leases.release(read.id);
    }
  }

  /** A credential was set: the calls parked waiting for it are approved (`credential-renewal.ts`). */
  async credentialSet(scope: CredentialScope, name: string): Promise<void> {
    if (!this.#closed) await this.#renewal.renewed(scope, name).catch((error: unknown) => this.onError(error));
  }

  /** The runs executing in this engine now (not parked ones). */
  executingRuns(): string[] {
    return [...this.#executors.keys()];
  }

  /**
   * Stops: runs still executing stop where they are (they stay `running`, to be resumed, and
   * their waiters reject with `closed`), and every lease is given up.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wake?.stop();
    clearInterval(this.#rescan);
    this.#takeover?.stop();
    const closed = new EngineError(
      "closed",
      "The engine closed while the run was executing or waiting; it resumes with `resume` (a waiting run wakes in the next engine).",
    );
    for (const { executor } of this.#executors.values()) executor.stop(closed);
    this.#waiters.failAll(closed);
    await this.#leases.close().catch(() => {});
  }

  // ---- RunHost ----

  toolset(id: string): Promise<LoadedToolset> {
    return this.#catalog.get(id);
  }

  compile(source: string): Promise<CompiledScript> {
    return this.#catalog.compile(source);
  }

  /** Starts executing a run unless it executes already; how it stops is reported to the waiters. */
  execute(run: RunRecord, toolset: LoadedToolset): void {
    // Looked up and registered without an await: two resumes (or a resume and a start) can never run one run twice.
    if (this.#executors.has(run.id)) return;
    const { store, clock } = this;
    const { sandboxes, source, limits, recordEvents, webhookBaseUrl } = this.#options;
    const executor = new RunExecutor(run, toolset, {
      store,
      sandboxes,
      source,
      clock,
      limits,
      observe: (tool, value) => this.#catalog.observe(toolset.id, tool, value),
      createWebhook: (runId, name) => createWebhook(store, clock, webhookBaseUrl, runId, name),
      onDecisionNeeded: (runId, wait) => this.#options.emit(decisionEvent(runId, wait)),
      workflows: this.#children,
      recordEvents,
    });
    const stopped = this.#leases
      .claim(run)
      .then((claimed) => {
        if (!claimed) executor.stop(new EngineError("conflict", `Run ${run.id} is held by another live process; it goes on there.`));
        return executor.execute(this.#leases.epoch(run.id));
      })
      .then(
        (result) => {
          this.#executors.delete(run.id);
          if (result.status === "waiting") {
            // Kept while this engine wakes runs, so requests from other processes come here.
            if (this.#options.wake === false) void this.#leases.release(run.id).catch(() => {});
            this.#waiters.report(run.id, result);
            this.#options.emit({ type: "run.waiting", runId: run.id, waits: result.waits, ...(result.wakeAt === undefined ? {} : { wakeAt: result.wakeAt }) });
            this.#wake?.schedule(result.wakeAt);
            // Under a virtual clock a parked child no longer drives time: its caller looks again.
            if (this.clock.virtual) this.#tellCaller(run.caller, run.id);
          } else {
            // The store cleared the lease with the end; this engine forgets it.
            void this.#leases.release(run.id).catch(() => {});
            this.#report(run.id, result, run.caller);
          }
        },
        async (error: unknown) => {
          this.#executors.delete(run.id);
          if (isLeaseLost(error)) {
            // Another process took the run over (this one's lease had lapsed): it goes on there,
            // from the journal. Not a fault, and not this engine's to release.
            const epoch = this.#leases.epoch(run.id);
            this.#leases.forget(run.id);
            // Alive after all: the takeover's "stopped without shutting down" is taken back.
            if (epoch !== undefined) await this.store.noteLeaseLost(run.id, epoch).catch((failure: unknown) => this.onError(failure));
            this.#waiters.fail(run.id, error);
            return;
          }
          // Counted against the run (host-faults.ts): the fault that reaches the limit fails it now, by executing it once more.
          const faults = this.#closed || !countsAsHostFault(error) ? 0 : await this.store.noteHostFault(run.id, describeFault(error)).catch(() => 0);
          if (faults === MAX_HOST_FAULTS) return this.execute(run, toolset);
          // Left `running`, released (marked so) before anyone hears of it: the takeover scan of
          // this engine or another takes it again after a backoff (run-takeover.ts), or `resume` does.
          if (!this.#closed) await this.#leases.release(run.id).catch(() => {});
          this.#waiters.fail(run.id, error);
        },
      );
    this.#executors.set(run.id, { executor, stopped });
  }

  executing(runId: string): boolean {
    return this.#executors.has(runId);
  }

  async resumeStopped(run: RunRecord): Promise<void> {
    if (run.status !== "running" || this.#executors.has(run.id) || this.#leases.heldElsewhere(run) || this.#closed) return;
    const loaded = await this.#catalog.get(run.toolsetId);
    this.#catalog.checkSources(loaded.pinned);
    this.execute(run, loaded);
  }

  async recordedEnd(run: RunRecord): Promise<RunEnd | undefined> {
    if (run.status === "completed") return { status: "completed", output: run.output ?? null };
    if (run.status === "failed" && run.error) return { status: "failed", error: run.error };
    if (run.status === "cancelled") {
      const [last] = await this.store.readJournal(run.id, Math.max(0, run.journalLength - 1));
      return { status: "cancelled", reason: last?.kind === "run.cancelled" ? last.reason : "cancelled" };
    }
    return undefined;
  }

  async applyRequest(runId: string, request: RunRequest): Promise<void> {
    switch (request.kind) {
      case "signal":
      case "child":
        await this.#notify(runId, request);
        return;
      case "decide":
        await this.decide(runId, request.seq, request.decision, request.reason);
        return;
      case "cancel":
        await this.cancel(runId, request.reason);
    }
  }

  onError(error: unknown): void {
    this.#options.emit({ type: "engine.error", error });
  }

  // ---- waking ----

  /** Marks a parked run running again and executes it (once, however many ask at the same time). */
  #unpark(runId: string): Promise<void> {
    const waking = this.#waking.get(runId);
    if (waking) return waking;
    const unparked = (async () => {
      const read = await this.run(runId);
      if (read.status !== "waiting" || this.#executors.has(runId)) return;
      const loaded = await this.#catalog.get(read.toolsetId);
      this.#catalog.checkSources(loaded.pinned);
      // Claimed before it is marked running: a run another process holds is left to it.
      if (!(await this.#leases.claim(read))) return;
      // Read again under the lease: another node may have woken (even ended) it since the read above.
      const run = await this.run(runId);
      if (terminalStatuses.includes(run.status)) await this.#leases.release(runId);
      if (run.status !== "waiting" || this.#executors.has(runId)) return;
      const decisions = (run.waits ?? []).filter(needsDecision);
      await this.store.append(
        runId,
        [],
        { status: "running", updatedAt: this.clock.now(), wakeAt: null, waits: decisions.length > 0 ? decisions : null },
        this.#leases.epoch(runId),
      );
      this.execute({ ...run, status: "running" }, loaded);
    })().finally(() => this.#waking.delete(runId));
    this.#waking.set(runId, unparked);
    return unparked;
  }

  /**
   * A parked run taken over is held here now: its timer is this engine's, and a signal it waits
   * for that was kept before (its request applied by nobody: the old holder died first) wakes it.
   */
  async #heldParked(run: RunRecord): Promise<void> {
    this.#wake?.schedule(run.wakeAt);
    for (const wait of run.waits ?? []) {
      if (wait.kind !== "signal" || this.#closed) continue;
      if ((await this.store.pendingSignals(run.id, wait.name)).length > 0) return this.#unpark(run.id);
    }
  }

  /** Wakes the parked runs whose timers are due; resolves with the next `wakeAt`. */
  async #wakeDue(now: number): Promise<number | undefined> {
    const owner = this.#options.wake === "owned" ? this.#leases.owner : undefined;
    const skipped = new Set<string>();
    // Runs another live process holds are its to wake; this engine looks again when their lease would lapse.
    let retryAt: number | undefined;
    for (;;) {
      const due = (await this.store.listRuns({ wakeBy: now, limit: 500, ...(owner ? { owner } : {}) })).filter(
        (run) => !this.#executors.has(run.id) && !skipped.has(run.id),
      );
      if (due.length === 0) break;
      for (const run of due) {
        if (this.#closed) return undefined;
        if (this.#leases.heldElsewhere(run)) {
          skipped.add(run.id);
          retryAt = Math.min(retryAt ?? Infinity, this.clock.now() + Math.max(1, (run.owner?.until ?? 0) - Date.now()));
          continue;
        }
        await this.#unpark(run.id).catch((error: unknown) => this.onError(error));
        if (this.#waking.has(run.id) || (!this.#executors.has(run.id) && (await this.run(run.id)).status === "waiting")) skipped.add(run.id);
      }
    }
    const next = await this.store.nextWakeAt({ after: now, ...(owner ? { owner } : {}) });
    return next === undefined ? retryAt : Math.min(next, retryAt ?? Infinity);
  }

  /**
   * Something a run may be waiting for happened: a signal was kept for it, or a child run it
   * started ended. A live execution looks for it; a run parked on it wakes. Resolves with the
   * holder, when another process holds the run.
   */
  async #notify(
    runId: string,
    event: { readonly kind: "signal"; readonly name: string } | { readonly kind: "child"; readonly runId: string },
  ): Promise<string | undefined> {
    for (let live = this.#executors.get(runId); live; live = this.#executors.get(runId)) {
      if (event.kind === "signal" ? live.executor.notifySignal(event.name) : live.executor.notifyChild(event.runId)) return undefined;
      await live.stopped; // parking: look again once it is parked
    }
    const run = await this.run(runId);
    if (terminalStatuses.includes(run.status)) return undefined;
    if (run.owner !== undefined && run.owner.id !== this.#leases.owner) {
      // The process holding the run looks again (takes the signal from the store, reads the child)
      // when it reads this request. Left even when its lease looks lapsed from here: that view may
      // be stale (a loaded node renews late, or this read waited), and a live holder told nothing
      // would park on a signal already kept. Whoever holds the run next applies it.
      await this.store.putRunRequest(runId, event, this.clock.now());
      if (this.#leases.heldElsewhere(run)) return run.owner.id;
    }
    const waitsFor = (wait: RunWait) =>
      event.kind === "signal" ? wait.kind === "signal" && wait.name === event.name : wait.kind === "child" && wait.runId === event.runId;
    if (run.status === "waiting" && run.waits?.some(waitsFor)) await this.#unpark(runId);
    return undefined;
  }

  #report(runId: string, end: RunEnd, caller?: RunCaller): void {
    this.#waiters.report(runId, end);
    this.#options.emit({ type: "run.ended", runId, end });
    this.#tellCaller(caller, runId);
  }

  /** A workflow's child run ended (or parked under a virtual clock): the run that started it looks again. */
  #tellCaller(caller: RunCaller | undefined, childId: string): void {
    if (caller === undefined || this.#closed) return;
    // Its end also woke the caller in the store (`RunPatch.wakeRun`): this is the prompt path.
    this.#notify(caller.runId, { kind: "child", runId: childId }).catch((error: unknown) => this.onError(error));
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", "The engine is closed.");
  }
}

/** The size of `value` as JSON, or undefined if it is not JSON. */
function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : Buffer.byteLength(text);
  } catch {
    return undefined;
  }
}
