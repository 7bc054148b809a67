/**
 * Executes one run: replays its journal into a fresh sandbox, then goes live until the script
 * ends or parks. It owns the sandbox and the order of the journal; what happens to each call the
 * script issues is the intake's (`call-intake.ts`), and how batches are written the journal's
 * (`run-journal.ts`).
 *
 * Invariants:
 * - The journal is the truth. The sandbox is a cache of the journal's effect on the script:
 *   it can be thrown away at any time and rebuilt by replay.
 * - `seq` is given by the sandbox in issue order; entries that issue calls (`call.scheduled`,
 *   `call.rejected`) are journaled in seq order.
 * - Outcomes reach the script in the order their entries are journaled. A live outcome is
 *   journaled as the first entry of the batch that also holds what the script did in reaction
 *   to it; nothing the script did leaves the engine (a call sent, an output returned) before
 *   that batch is durable. So a crash can lose only work that had no effect.
 * - After the end is journaled, nothing else is: late results are dropped.
 * - The journal never holds more than `maxJournalEntries`, the end included: a step that would
 *   pass it ends the run with a limit error instead of being journaled.
 * - What crosses into the engine from the sandbox is checked within the value bounds before it
 *   is canonicalised or stringified (see `util/value-bounds.ts`).
 * - A run's error reports a call's failure only for a failure this executor delivered (see
 *   `run-error.ts`).
 * - A sandbox lost under the run is rebuilt by replay, whether it was lost while replaying or live;
 *   a run whose own script kills its sandbox again and again, or gets it stopped by the watchdog,
 *   is failed, never rebuilt into the same fault (see `sandboxFailure`).
 * - Host faults counted against the run (see `host-faults.ts`) are checked before any of its
 *   script runs, and cleared by the first commit in which it gets past where it was (an
 *   outcome, a park, the end); re-sending an interrupted call is not that.
 * - An execution holds the run under the lease epoch it was given: its first write after another
 *   process claimed the run is refused (`LeaseLostError`), and it stops there (`fault`), sending
 *   nothing more (nothing it did leaves the engine before its batch is durable).
 */
import type { Decision, DecisionWait, JournalEvent, JsonValue, PinnedTool, RunEnd, RunEvent, RunWait, ToolFailure } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import { MAX_NEIGHBOUR_LOSSES, MAX_SANDBOX_REBUILDS } from "../limits.js";
import {
  SandboxLostError,
  SandboxStoppedError,
  type Delivery,
  type IssuedCall,
  type LogLine,
  type Sandbox,
  type SandboxFactory,
  type SandboxLimits,
  type SandboxOptions,
  type Step,
} from "../sandbox/sandbox.js";
import { executionSuspended, type ToolSource } from "../sources/tool-source.js";
import type { RunPatch, RunRecord, Store } from "../store/store.js";
import type { LoadedToolset } from "../toolset/loaded-toolset.js";
import { valueProblem } from "../util/value-bounds.js";
import { CallIntake } from "./call-intake.js";
import { logsOf, outcomeEvent, type CallOutcome } from "./call-outcome.js";
import { readHistory, type History } from "./history.js";
import { hostFaultError, SANDBOX_LOST_END, tooManyHostFaults } from "./host-faults.js";
import { isPrimitive } from "./primitives.js";
import { replayHistory, type ReplayResult } from "./replay.js";
import { ReusePool } from "./reuse-pool.js";
import { guestErrorToRunError, runError, type DeliveredFailure } from "./run-error.js";
import { journalLimitError, RunJournal } from "./run-journal.js";
import { effectiveBudget, RunBudgetMeter, type DefaultBudget } from "./run-budget.js";
import type { WorkflowHost } from "./workflow-host.js";
import { reusableWorkflowCalls } from "../workflows/workflow-reuse.js";
import { startRunTelemetry } from "../telemetry/run-telemetry.js";

/** The run is parked: it holds no sandbox and waits for `waits`; it wakes by replay. */
export interface RunPause {
  readonly status: "waiting";
  readonly waits: readonly RunWait[];
  /** When its earliest timer is due, if it has one. */
  readonly wakeAt?: number;
}

/** How one execution of a run stopped: the run ended, or it parked. */
export type ExecutionResult = RunEnd | RunPause;

export interface ExecutorLimits {
  readonly sandbox: SandboxLimits;
  readonly maxJournalEntries: number;
  readonly maxValueBytes: number;
  readonly runConcurrency: number;
  readonly maxAttempts: number;
  /** A run with only waits open keeps its sandbox if a timer is due within this long (see limits.ts). */
  readonly holdWaitMs: number;
  /** Each run's budget where neither its start nor its toolset gives one (see limits.ts). */
  readonly budget: DefaultBudget;
  /** Tool calls per sliding minute per namespace (a quota: `rate-gate.ts`); absent: none. */
  readonly namespaceCallsPerMinute?: number;
}

export interface ExecutorDeps {
  readonly store: Store;
  readonly sandboxes: SandboxFactory;
  readonly source: ToolSource;
  readonly clock: Clock;
  readonly limits: ExecutorLimits;
  /** Sees every live result (for observed result types). */
  readonly observe?: (tool: PinnedTool, value: JsonValue) => void;
  /** Binds a new webhook token to the run and signal name; resolves with its URL once durable. */
  readonly createWebhook: (runId: string, name: string) => Promise<string>;
  /** Told once a call's request for a decision is durable. */
  readonly onDecisionNeeded?: (runId: string, wait: DecisionWait) => void;
  /** Starts, reads and signals the child runs of `workflows.<name>` calls. */
  readonly workflows: WorkflowHost;
  /**
   * Whether the run's events (parked, ended, decision needed) are written into the store in the
   * commit that makes them happen, for a reader that must miss none (the server's webhooks).
   */
  readonly recordEvents?: boolean;
}

/** Where an execution stands. */
type Phase =
  /** The journal is being read and replayed: requests that need its open calls (a decision) wait. */
  | "loading"
  /** Live, the sandbox idle: outcomes are delivered as they come; with none to deliver, the run may park. */
  | "idle"
  /** The sandbox is running a delivery (or being rebuilt after one failed): outcomes queue. */
  | "delivering"
  /** Under a virtual clock, time is jumping to the next timer: the run is not idle until it has. */
  | "advancing"
  /** Both: a timer the jump fired has an outcome, delivered at once, while the jump still settles (a scenario's signal or decision). */
  | "advancing+delivering"
  /** Writing `waiting`, then freeing the sandbox: requests go to the next execution. */
  | "parking"
  /** Parked: this execution is over; the run waits in the store. */
  | "parked"
  /** The end is journaled (or being journaled): nothing else is. */
  | "ended"
  /** Stopped by a fault of the engine (or its closing) without an end: the run stays `running`, to be resumed. */
  | "stopped";

/** Live outcomes delivered in one sandbox round trip at most: bounds one message and one commit. */
const MAX_DELIVERIES_PER_HOP = 64;

/** An outcome waiting to be delivered: journaled already (a rejection, a reused result), or live (journaled with the step that reacts to it). */
interface PendingDelivery {
  readonly delivery: Delivery;
  /** For a live outcome: its entry, and the signal it takes (consumed in the commit that journals it). */
  readonly live?: { readonly event: JournalEvent; readonly signalId?: number };
}

export class RunExecutor {
  private readonly intake: CallIntake;
  private readonly journal: RunJournal;
  private sandbox: Sandbox | undefined;
  private phase: Phase = "loading";
  private logCount = 0;
  /** The lease epoch under which crashes counted against the run are to be forgiven once it only waits for answers (`forgiveCrashes`); undefined: none to forgive. */
  private crashesForgivenUnder: number | undefined;
  /** Outcomes journaled with the step that issued their call, waiting to be delivered (before any live one). */
  private readonly prejournaled: Delivery[] = [];
  /** Live outcomes waiting to be delivered, as they came. */
  private readonly outcomes: { readonly seq: number; readonly outcome: CallOutcome; readonly signalId?: number }[] = [];
  /** Requests that arrived while the journal was loading (a decision), applied once it is. */
  private readonly whenReady: (() => void)[] = [];
  /** Sandboxes rebuilt after their worker died while running this run's own request. */
  private rebuilds = 0;
  /** Sandboxes lost because another sandbox's script ended their shared worker. */
  private neighbourLosses = 0;
  /** Failures delivered to the script, by seq: what its error may report as a call's failure. */
  private readonly failuresDelivered = new Map<number, ToolFailure>();
  /** What the run spent of its budget, from its journal on (set once the journal is read). */
  private meter: RunBudgetMeter | undefined;
  private readonly done: Promise<ExecutionResult>;
  /** Settles once the journal has been read and the next index is known. */
  private readonly loaded: Promise<void>;
  private markLoaded!: () => void;
  private resolveDone!: (result: ExecutionResult) => void;
  private rejectDone!: (error: unknown) => void;

  constructor(
    private readonly run: RunRecord,
    private readonly toolset: LoadedToolset,
    private readonly deps: ExecutorDeps,
  ) {
    this.journal = new RunJournal(run.id, deps.store, {
      maxEntries: deps.limits.maxJournalEntries,
      recordEvents: deps.recordEvents === true,
      shownWaits: () => this.intake.shownWaits(),
      onFull: (error, at) => this.endWith([], { status: "failed", error }, at),
      onDurable: () => this.pump(),
    });
    this.intake = new CallIntake(
      run,
      toolset,
      deps,
      this.journal,
      {
        outcome: (seq, outcome, signalId) => {
          this.outcomes.push({ seq, outcome, ...(signalId === undefined ? {} : { signalId }) });
          this.pump();
        },
        decisionNeeded: (wait) => this.deps.onDecisionNeeded?.(this.run.id, wait),
        changed: () => this.pump(),
        fault: (error) => this.fault(error),
      },
      deps.workflows.schemas,
    );
    this.loaded = new Promise<void>((resolve) => (this.markLoaded = resolve));
    this.done = new Promise<ExecutionResult>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // Stopped before `execute` is called (the engine closed while the run's lease was being
    // claimed), the rejection waits for `execute` to hand it on: never an unhandled rejection.
    this.done.catch(() => {});
  }

  /**
   * Runs until the end, or until only waits are left and it parks. Resolves with how the run
   * ended (also when it had ended before) or what it waits for. Rejects only for faults of the
   * engine (store, sandbox host); the run is then left `running`, intact, for `resume` to pick up.
   */
  execute(epoch?: number): Promise<ExecutionResult> {
    if (this.phase === "stopped") return this.done;
    this.begin(epoch).catch((error: unknown) => this.fault(error));
    return this.done;
  }

  /** `epoch`: the lease epoch the engine holds the run under, named by every batch (`RunJournal.open`). */
  private async begin(epoch: number | undefined): Promise<void> {
    const entries = await this.deps.store.readJournal(this.run.id);
    const history = readHistory(this.run.id, entries);
    if (history.traceparent !== undefined) this.intake.joinTrace(history.traceparent);
    if (!history.end) {
      // The run's span for this execution; it ends with the run, or is dropped when the execution parks or stops.
      const telemetry = (this.intake.telemetry = startRunTelemetry(this.run, entries, history.traceparent, this.deps.clock));
      this.done.then(
        (result) => telemetry.finish(result),
        () => telemetry.finish(undefined),
      );
    }
    if (this.run.parentId)
      this.intake.reuseFrom(new ReusePool(this.run.parentId, reusableWorkflowCalls(await this.deps.store.readJournal(this.run.parentId)), entries));
    this.logCount = history.logCount;
    const started = entries[0]?.kind === "run.started" ? entries[0] : undefined;
    this.meter = RunBudgetMeter.fromJournal(effectiveBudget(this.deps.limits.budget, this.toolset.budget, started?.budget), entries);
    // Read now: taking the lease over from a process that died under the run counted a fault.
    const faults = history.end ? undefined : (await this.deps.store.getRun(this.run.id))?.hostFaults;
    this.journal.open(history.length, faults !== undefined, epoch);
    this.markLoaded();
    if (history.end) {
      this.phase = "ended";
      this.resolveDone(endOf(history.end));
      return;
    }
    if (faults !== undefined && tooManyHostFaults(faults)) {
      this.endWith([], { status: "failed", error: hostFaultError(faults) }, this.deps.clock.now());
      return;
    }
    if (faults !== undefined && faults.crashes > 0) this.crashesForgivenUnder = epoch;
    const replayed = await this.replayed(history);
    if (replayed === undefined) return;
    if (!replayed.ok) {
      this.endWith([], { status: "failed", error: runError("divergence", replayed.divergence) }, this.deps.clock.now());
      return;
    }
    const { fresh } = replayed;
    this.intake.remember(history.calls.values());
    if (!fresh.end) this.intake.resume(history.calls.values(), replayed.live);
    if (this.phase === "loading") this.phase = "idle";
    // Calls shown waiting for a worker by an engine that stopped are this engine's to show again.
    if (this.phase === "idle" && this.run.waits?.some((wait) => wait.kind === "worker"))
      this.journal.writeWaits(this.deps.clock.now()).catch((error: unknown) => this.fault(error));
    // Requests that arrived while the journal was replayed (a decision) apply before the run can park.
    for (const request of this.whenReady.splice(0)) request();
    if (this.phase === "idle") this.onStep(fresh, undefined);
  }

  /**
   * A new sandbox with the journal replayed into it (`this.sandbox` once it is there). A sandbox
   * lost meanwhile is made again, as `sandboxFailure` decides; undefined when the run ended
   * meanwhile (cancelled, stopped, or failed by its sandbox).
   */
  private async replayed(history: History): Promise<ReplayResult | undefined> {
    for (const delivery of history.deliveries) this.noteDelivered(delivery);
    for (;;) {
      let sandbox: Sandbox | undefined;
      try {
        sandbox = await this.deps.sandboxes.create(this.sandboxOptions(history));
        if (this.over()) {
          // Cancelled (or stopped) while the sandbox was being made.
          await sandbox.dispose();
          return undefined;
        }
        this.sandbox = sandbox;
        return await replayHistory(sandbox, history, (tool, args) => this.intake.recordedArgs(tool, args));
      } catch (error) {
        this.sandbox = undefined;
        void sandbox?.dispose().catch(() => {});
        const next = this.sandboxFailure(error);
        if (next.action === "fault") throw error;
        if (next.action === "end") {
          this.endWith([], next.end, this.deps.clock.now());
          return undefined;
        }
        if (this.over()) return undefined;
      }
    }
  }

  /**
   * What a sandbox's failure means for the run. Stopped by the watchdog: the script ran past its
   * budget where it cannot be interrupted, and would again: the run fails with that limit. Lost
   * while running this run's own request: rebuilt, at most `MAX_SANDBOX_REBUILDS` times, then the
   * run fails (its script is what kills it). Lost because a neighbour's script ended the worker:
   * rebuilt (up to `MAX_NEIGHBOUR_LOSSES`, then left for `resume`). Anything else is a fault.
   */
  private sandboxFailure(error: unknown): { readonly action: "rebuild" | "fault" } | { readonly action: "end"; readonly end: RunEnd } {
    if (error instanceof SandboxStoppedError) {
      return { action: "end", end: { status: "failed", error: guestErrorToRunError(error.error, this.run, (seq) => this.deliveredFailure(seq)) } };
    }
    if (!(error instanceof SandboxLostError)) return { action: "fault" };
    if (!error.culprit) return ++this.neighbourLosses > MAX_NEIGHBOUR_LOSSES ? { action: "fault" } : { action: "rebuild" };
    if (++this.rebuilds <= MAX_SANDBOX_REBUILDS) return { action: "rebuild" };
    const message =
      `${SANDBOX_LOST_END}${this.rebuilds} times while running it (the last time: ${error.message}). ` +
      "The script itself is what makes it fail (through a fault of the sandbox); change what it does at its last step, and fork the run (retry_run).";
    return { action: "end", end: { status: "failed", error: runError("internal", message) } };
  }

  private noteDelivered(delivery: Delivery): void {
    if (!delivery.ok) this.failuresDelivered.set(delivery.seq, delivery.error);
  }

  private deliveredFailure(seq: number): DeliveredFailure | undefined {
    const failure = this.failuresDelivered.get(seq);
    return failure === undefined ? undefined : { tool: this.intake.toolOf(seq) ?? "", failure };
  }

  private sandboxOptions(history: History): SandboxOptions {
    return {
      runId: this.run.id,
      js: this.run.js,
      filename: "script.js",
      tools: this.toolset.groups,
      features: this.toolset.features,
      workflows: Object.keys(this.toolset.workflows),
      input: history.input,
      seed: this.run.id,
      startedAt: history.startedAt,
      limits: this.deps.limits.sandbox,
    };
  }

  /** Journals what the script did in one step (after `outcome`, if it reacted to one) and acts on it. */
  private onStep(
    step: Step,
    outcome: { readonly event: JournalEvent; readonly at: number; readonly seq: number; readonly signalId?: number } | undefined,
  ): void {
    const at = outcome?.at ?? this.deps.clock.now();
    const events: JournalEvent[] = outcome ? [outcome.event] : [];
    const consumed = outcome?.signalId === undefined ? undefined : [{ id: outcome.signalId, seq: outcome.seq }];
    if (step.end) {
      for (const call of step.calls) events.push(unsentWarning(call));
      for (const log of step.logs) events.push(this.logEvent(log));
      const end: RunEnd = step.end.ok
        ? this.checkOutput(step.end.output)
        : { status: "failed", error: guestErrorToRunError(step.end.error, this.run, (seq) => this.deliveredFailure(seq)) };
      // The signal the last outcome took is consumed with the end too, or it would stay pending.
      this.endWith(events, end, at, consumed);
      return;
    }
    const overBudget = this.meter?.admit(step.calls);
    if (overBudget !== undefined) {
      // Nothing of the step is sent: the run fails at the call that would go past its budget (see `run-budget.ts`).
      for (const log of step.logs) events.push(this.logEvent(log));
      this.endWith(events, { status: "failed", error: overBudget }, at, consumed);
      return;
    }
    const scheduled = this.intake.schedule(step.calls);
    events.push(...scheduled.events);
    // Delivered at the time of the entry that records them, exactly as replay will.
    for (const { seq, outcome: answer } of scheduled.answered) this.prejournaled.push(delivery(seq, at, answer));
    for (const log of step.logs) events.push(this.logEvent(log));
    const patch = this.journal.withHostTasks(
      this.journal.withEvents(consumed && { updatedAt: at, consumeSignals: consumed }, at, scheduled.runEvents),
      at,
      scheduled.hostTasks,
    );
    this.journal.append(events, at, patch).then(scheduled.onDurable, (error: unknown) => this.fault(error));
    scheduled.begin();
    this.pump();
  }

  private checkOutput(output: JsonValue): RunEnd {
    const problem = valueProblem(output);
    if (problem !== undefined) return { status: "failed", error: runError("output", `The script's output is refused: ${problem}.`) };
    const bytes = Buffer.byteLength(JSON.stringify(output));
    if (bytes <= this.deps.limits.maxValueBytes) return { status: "completed", output };
    return {
      status: "failed",
      error: runError(
        "output",
        `The output is ${bytes} bytes; a run's output may be at most ${this.deps.limits.maxValueBytes} bytes. Return less (a summary, the first page) and log or store the rest.`,
      ),
    };
  }

  private logEvent(log: LogLine): JournalEvent {
    this.logCount = Math.max(this.logCount, log.ordinal + 1);
    return { kind: "log", level: log.level, message: log.message };
  }

  /** Delivers what waits to be delivered if the sandbox is idle: one pre-journaled outcome, or the live ones that came (up to a hop's worth). */
  private pump(): void {
    if ((this.phase !== "idle" && this.phase !== "advancing") || !this.sandbox) return;
    const batch = this.nextBatch();
    if (batch.length === 0) {
      this.onIdle();
      return;
    }
    if (this.overBudget(batch)) return;
    this.phase = this.phase === "advancing" ? "advancing+delivering" : "delivering";
    for (const { delivery } of batch) this.noteDelivered(delivery);
    this.sandbox.deliverEach(batch.map((pending) => pending.delivery)).then(
      (steps) => {
        // Still `delivering` while the steps are journaled one by one: the run is not idle (nor
        // deadlocked) between them. After the step that ends the script, the rest are dropped.
        steps.forEach((step, i) => {
          const { delivery: given, live } = batch[i]!;
          this.onStep(step, live && { event: live.event, at: given.at, seq: given.seq, ...(live.signalId === undefined ? {} : { signalId: live.signalId }) });
        });
        this.delivered();
        this.pump();
      },
      // A live outcome is journaled only with the step that reacts to it: deliver it again (or
      // journal it with the end). A pre-journaled one is in the journal, and the replay delivers it.
      (error: unknown) => this.onSandboxError(error, batch),
    );
  }

  /**
   * Whether a live result in `batch` takes the results received past the run's budget: the run
   * then fails with the outcomes up to it journaled, none delivered.
   */
  private overBudget(batch: readonly PendingDelivery[]): boolean {
    for (let i = 0; i < batch.length; i++) {
      const { delivery: given, live } = batch[i]!;
      if (live === undefined || !given.ok) continue;
      const error = this.meter?.receive(given.seq, this.intake.toolOf(given.seq) ?? "", given.value);
      if (error === undefined) continue;
      const journaled = batch.slice(0, i + 1).flatMap((pending) => (pending.live === undefined ? [] : [pending.live.event]));
      this.endWith(journaled, { status: "failed", error }, this.deps.clock.now());
      return true;
    }
    return false;
  }

  /** A delivery (or the rebuild after one failed) is over: the sandbox is idle again, time may still be moving. */
  private delivered(): void {
    if (this.phase === "delivering") this.phase = "idle";
    else if (this.phase === "advancing+delivering") this.phase = "advancing";
  }

  /** Pre-journaled outcomes first, one at a time (their entries precede every live outcome's); else the live outcomes that came, in one hop. */
  private nextBatch(): PendingDelivery[] {
    const prejournaled = this.prejournaled.shift();
    if (prejournaled) return [{ delivery: prejournaled }];
    const at = this.deps.clock.now();
    return this.outcomes.splice(0, MAX_DELIVERIES_PER_HOP).map(({ seq, outcome, signalId }) => ({
      delivery: delivery(seq, at, outcome),
      live: {
        event: outcomeEvent(seq, outcome),
        ...(signalId === undefined ? {} : { signalId }),
      },
    }));
  }

  /**
   * The sandbox failed under a delivery: rebuilt, its live outcomes (not journaled yet) are
   * delivered again; if the run ends instead, they are journaled with the end, so that its
   * journal replays to the same end.
   */
  private onSandboxError(error: unknown, batch: readonly PendingDelivery[]): void {
    const next = this.sandboxFailure(error);
    if (next.action === "fault") return this.fault(error);
    const live = batch.filter((pending) => pending.live !== undefined);
    if (next.action === "end") {
      this.delivered();
      return this.endWith(
        live.map((pending) => pending.live!.event),
        next.end,
        this.deps.clock.now(),
      );
    }
    this.outcomes.unshift(
      ...live.map(({ delivery: given, live: entry }) => ({
        seq: given.seq,
        outcome: { ...(given.ok ? { ok: true as const, value: given.value } : { ok: false as const, error: given.error }), ...logsOf(entry!.event) },
        ...(entry!.signalId === undefined ? {} : { signalId: entry!.signalId }),
      })),
    );
    // Still `delivering` until the new sandbox has replayed the journal: nothing is delivered into it meanwhile.
    this.rebuild().catch((failure: unknown) => this.fault(failure));
  }

  /**
   * The sandbox's worker died under the script (another run's crash, a retired worker): the
   * run itself is intact. Once everything the old sandbox produced is durable, a new sandbox
   * replays the journal; calls in flight go on and are delivered to it.
   */
  private async rebuild(): Promise<void> {
    const lost = this.sandbox;
    this.sandbox = undefined;
    void lost?.dispose().catch(() => {});
    await this.journal.lastWrite;
    const history = readHistory(this.run.id, await this.deps.store.readJournal(this.run.id));
    if (this.over()) return;
    const replayed = await this.replayed(history);
    if (replayed === undefined) return;
    if (!replayed.ok) throw new Error(`rebuilding the lost sandbox of ${this.run.id} diverged: ${replayed.divergence}`);
    // Every pre-journaled delivery is durable by now, so the replay has just delivered it.
    this.prejournaled.length = 0;
    this.delivered();
    this.onStep(replayed.fresh, undefined);
  }

  /**
   * The script waits and nothing is left to deliver. If nothing is open, nothing can ever settle
   * its promise: it fails now. If only waits are open, it parks (or, under a virtual clock, time
   * jumps to the next timer); a timer due very soon is waited for with the sandbox kept.
   */
  private onIdle(): void {
    if (this.phase !== "idle") return;
    if (this.intake.open === 0) {
      const error = runError(
        "deadlock",
        "The script is waiting for a promise that nothing can settle: no tool call is in flight and nothing is awaited (sleep, signal, approval). Await only promises of tool calls (or values), and make sure the default export returns.",
      );
      this.endWith([], { status: "failed", error }, this.deps.clock.now());
      return;
    }
    // Calls are in flight (or about to be), a kept signal is being read, or a write may add work.
    if (!this.intake.onlyWaits || this.journal.writing) {
      if (!this.journal.writing && this.intake.awaitsOnlyAnswers) this.forgiveCrashes();
      return;
    }
    const virtual = this.deps.clock.virtual;
    if (virtual) {
      // Under a virtual clock a child executing here is like a call in flight: time moves when it is idle, not before.
      if (this.intake.waits.waitsForExecutingChild()) return;
      this.phase = "advancing";
      virtual.advance().then(
        (moved) => {
          if (this.phase === "advancing+delivering") this.phase = "delivering";
          if (this.phase !== "advancing") return;
          this.phase = "idle";
          if (moved) this.pump();
          else this.park();
        },
        (error: unknown) => this.fault(error),
      );
      return;
    }
    const due = this.intake.waits.earliestDue();
    if (due !== undefined && due - this.deps.clock.now() <= this.deps.limits.holdWaitMs) return;
    this.park();
  }

  /**
   * The run got back to where it only waits for answers from outside (its replay done, every open
   * call a wait or handed to its source: sent again or still with its worker) without faulting: the processes that died under it
   * meanwhile are forgiven (`host-faults.ts`), once per execution.
   */
  private forgiveCrashes(): void {
    const epoch = this.crashesForgivenUnder;
    if (epoch === undefined) return;
    this.crashesForgivenUnder = undefined;
    this.deps.store.forgiveCrashes(this.run.id, epoch).catch((error: unknown) => this.fault(error));
  }

  /** Only waits are open: the run becomes `waiting`, frees its sandbox, and this execution ends. */
  private park(): void {
    this.phase = "parking";
    const waits = this.intake.waits.describe();
    const wakeAt = this.intake.waits.earliestDue();
    // Nothing of this execution moves the run from here: the next execution takes over its waits.
    this.intake.close();
    const at = this.deps.clock.now();
    const parked: RunEvent = { type: "run.waiting", runId: this.run.id, waits, ...(wakeAt === undefined ? {} : { wakeAt }) };
    this.journal.append([], at, this.journal.withEvents({ status: "waiting", updatedAt: at, waits, wakeAt: wakeAt ?? null }, at, [parked])).then(
      () => {
        this.phase = "parked";
        this.journal.close();
        void this.release();
        this.resolveDone({ status: "waiting", waits, ...(wakeAt === undefined ? {} : { wakeAt }) });
      },
      (error: unknown) => this.fault(error),
    );
  }

  /**
   * The child run `childId` ended (or, under a virtual clock, parked): the `result()` calls
   * waiting for it look again. False when this execution is parking: the engine wakes the run instead.
   */
  notifyChild(childId: string): boolean {
    if (this.over()) return false;
    if (this.phase === "loading") return true; // resuming the open calls reads the child's state
    this.intake.notifyChild(childId);
    // Under a virtual clock a parked child no longer drives time: this run may now advance it.
    queueMicrotask(() => this.pump());
    return true;
  }

  /**
   * A signal `name` was kept for this run: the oldest open `signal(name)` call looks for it.
   * False when this execution is parking: the engine resumes the run instead.
   */
  notifySignal(name: string): boolean {
    if (this.over()) return false;
    if (this.phase === "loading") return true; // resuming the open calls reads the kept signals
    this.intake.notifySignal(name);
    return true;
  }

  /**
   * Decides on a call waiting for approval (or parked): the decision is journaled; then an
   * approved call is sent, a rejected one fails with `approval_rejected`. Resolves once the
   * decision is durable; false when this execution is parking (the engine retries on the next).
   */
  decide(seq: number, decision: Decision, reason: string | undefined): Promise<boolean> {
    if (this.over()) return Promise.resolve(false);
    if (this.phase === "loading") {
      return new Promise<boolean>((resolve, reject) => {
        this.whenReady.push(() => {
          this.decide(seq, decision, reason).then(resolve, reject);
        });
      });
    }
    return this.intake.decide(seq, decision, reason).then(() => true);
  }

  private endWith(events: JournalEvent[], end: RunEnd, at: number, consumeSignals?: RunPatch["consumeSignals"]): void {
    if (this.over()) return;
    if (!this.journal.fitsWithEnd(events.length)) {
      // The last step does not fit: only the end is journaled (the slot kept free for it).
      events = [];
      end = { status: "failed", error: journalLimitError(this.deps.limits.maxJournalEntries) };
      consumeSignals = undefined;
    }
    this.phase = "ended";
    this.intake.close();
    const { event, patch } = endRecord(end, at);
    // Recorded without the output (up to a value's limit, in every event row): it is the run's,
    // read from the run when the event is fanned out.
    const ended: RunEvent = { type: "run.ended", runId: this.run.id, end: end.status === "completed" ? { status: "completed", output: null } : end };
    // A child's end wakes its parked caller in the same commit, even if this process dies next.
    const wake = this.run.caller ? { wakeRun: this.run.caller.runId } : {};
    const consumed = consumeSignals === undefined ? {} : { consumeSignals };
    this.journal.appendEnd([...events, event], at, this.journal.withEvents({ ...patch, waits: null, wakeAt: null, ...wake, ...consumed }, at, [ended])!).then(
      () => {
        void this.release();
        this.resolveDone(end);
      },
      (error: unknown) => this.fault(error),
    );
  }

  /** Whether this execution can no longer act: it parks, has parked, ends or has stopped. */
  private over(): boolean {
    return this.phase === "parking" || this.phase === "parked" || this.phase === "ended" || this.phase === "stopped";
  }

  /**
   * Cancels the run: `run.cancelled` is journaled, calls in flight are abandoned, late results
   * dropped. Resolves with a pause instead when the run was parking: the engine cancels it then.
   */
  cancel(reason: string): Promise<ExecutionResult> {
    // Once the journal is read: the cancel entry must continue it.
    void this.loaded.then(() => this.endWith([], { status: "cancelled", reason }, this.deps.clock.now()));
    return this.done;
  }

  /** Stops executing (the engine is closing): the run stays `running`, to be resumed; `execute()` rejects with `reason`. */
  stop(reason: Error): void {
    this.fault(reason);
  }

  /** An engine fault: stop without writing an end, so the run stays `running` and can be resumed. */
  private fault(error: unknown): void {
    if (this.phase === "stopped") return;
    this.phase = "stopped";
    // The run stays `running`: a source that keeps calls (host tasks) keeps them for its resume.
    this.intake.close(executionSuspended("the run stopped executing in this process; it resumes"));
    this.journal.close();
    void this.release();
    this.rejectDone(error);
    // Requests waiting for the journal (a decision) answer now that they cannot be applied here.
    for (const request of this.whenReady.splice(0)) request();
  }

  private async release(): Promise<void> {
    this.intake.close();
    const sandbox = this.sandbox;
    this.sandbox = undefined;
    await sandbox?.dispose().catch(() => {});
  }
}

function delivery(seq: number, at: number, outcome: CallOutcome): Delivery {
  return outcome.ok ? { seq, at, ok: true, value: outcome.value } : { seq, at, ok: false, error: outcome.error };
}

function unsentWarning(call: IssuedCall): JournalEvent {
  const what = isPrimitive(call.tool) ? "was not waited for" : "was not sent";
  return {
    kind: "log",
    level: "warn",
    message: `[tapedeck] call #${call.seq} ${call.tool} ${what}: the script ended before awaiting it.`,
  };
}

/** The journal entry and the run patch that record `end`: the inverse of `endOf`. */
export function endRecord(end: RunEnd, at: number): { event: JournalEvent; patch: RunPatch } {
  switch (end.status) {
    case "completed":
      return { event: { kind: "run.completed", output: end.output }, patch: { status: "completed", output: end.output, updatedAt: at } };
    case "failed":
      return { event: { kind: "run.failed", error: end.error }, patch: { status: "failed", error: end.error, updatedAt: at } };
    case "cancelled":
      return { event: { kind: "run.cancelled", reason: end.reason }, patch: { status: "cancelled", updatedAt: at } };
  }
}

/** How a journal says the run ended, as a `RunEnd`. */
export function endOf(end: NonNullable<History["end"]>): RunEnd {
  if (end.ok) return { status: "completed", output: end.output };
  return "cancelled" in end ? { status: "cancelled", reason: end.cancelled } : { status: "failed", error: end.error };
}
