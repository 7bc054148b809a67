/**
 * Executes one run: replays its journal into a fresh sandbox, then goes live until the script
 * ends. This file is the heart of the engine; it is long because its invariants span the
 * whole life of a run and are easier to check in one place.
 *
 * Invariants:
 * - The journal is the truth. The sandbox is a cache of the journal's effect on the script:
 *   it can be thrown away at any time and rebuilt by replay.
 * - `seq` is given by the sandbox in issue order; entries that issue calls (`call.scheduled`,
 *   `call.rejected`) are journaled in seq order.
 * - Outcomes reach the script one at a time, in the order their entries are journaled.
 *   A live outcome is journaled as the first entry of the batch that also holds what the script
 *   did in reaction to it; nothing the script did leaves the engine (a call sent, an output
 *   returned) before that batch is durable. So a crash can lose only work that had no effect.
 * - A call is sent only once its `call.scheduled` entry is durable; the same key on every attempt.
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
 */
import type {
  Decision,
  DecisionWait,
  JournalEvent,
  JsonValue,
  PinnedTool,
  PinnedWorkflow,
  RunEnd,
  RunError,
  RunEvent,
  RunWait,
  ToolFailure,
} from "@tapedeck/protocol";
import { decisionEvent, toolFailure, toolPath } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import { EngineError } from "../errors.js";
import {
  SandboxLostError,
  SandboxStoppedError,
  type Delivery,
  type IssuedCall,
  type LogLine,
  type Sandbox,
  type SandboxFactory,
  type SandboxFeature,
  type SandboxLimits,
  type SandboxOptions,
  type Step,
} from "../sandbox/sandbox.js";
import { MAX_NEIGHBOUR_LOSSES, MAX_SANDBOX_REBUILDS, UNSERVED_NOTICE_MS } from "../limits.js";
import { valueProblem } from "../util/value-bounds.js";
import { hostFaultError, tooManyHostFaults } from "./host-faults.js";
import type { RunPatch, RunRecord, Store } from "../store/store.js";
import { executionSuspended, type Park, type ToolSource } from "../sources/tool-source.js";
import { canonicalValue } from "../util/canonical-json.js";
import type { ArgsValidator } from "./args-validator.js";
import { outcomeUnknown, RunDispatcher, tooManyAttempts, type Settled } from "./dispatcher.js";
import { guestErrorToRunError, runError, type DeliveredFailure } from "./run-error.js";
import { readHistory, type History } from "./history.js";
import { replayHistory, type ReplayResult } from "./replay.js";
import { ReusePool } from "./reuse-pool.js";
import { approvalRejected, describeWaits, earliestDue, isBuiltin, parkedRejected, parseBuiltin, signalTimedOut, type OpenWait } from "./waits.js";
import { UnservedCalls } from "./unserved-calls.js";
import { checkWorkflowCall, isWorkflowCall } from "../workflows/workflow-calls.js";
import { reusableWorkflowCalls } from "../workflows/workflow-reuse.js";
import type { WorkflowHost } from "../workflows/workflow-host.js";

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
}

/** The toolset of a run, with what executing it needs. */
export interface LoadedToolset {
  readonly id: string;
  readonly byPath: ReadonlyMap<string, PinnedTool>;
  /** group → tool names, for the sandbox's `tapedeck:tools` module (built-ins are not in it). */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  /** Globals the toolset enables (`fetch` for `http`); see `toolset/script-features.ts`. */
  readonly features: readonly SandboxFeature[];
  readonly validator: ArgsValidator;
  /** The workflows the toolset pins, by name (the `workflows` global). */
  readonly workflows: Readonly<Record<string, PinnedWorkflow>>;
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

/** Live outcomes delivered in one sandbox round trip at most: bounds one message and one commit. */
const MAX_DELIVERIES_PER_HOP = 64;

/** The version of replay behaviour this engine writes into `run.started`; golden journals pin it. */
export const REPLAY_VERSION = 1;

/** An outcome journaled with the step that issued its call (a rejection, or a result a fork reused), waiting to be delivered. */
interface Prejournaled {
  readonly delivery: Delivery;
}

/** A live outcome waiting to be delivered (and journaled with the step that follows it). */
interface PendingOutcome {
  readonly seq: number;
  readonly settled: Settled;
  /** The signal this outcome takes, consumed in the commit that journals it. */
  readonly signalId?: number;
}

export class RunExecutor {
  private readonly dispatcher: RunDispatcher;
  private sandbox: Sandbox | undefined;
  private nextIndex = 0;
  private logCount = 0;
  private readonly prejournaled: Prejournaled[] = [];
  private readonly outcomes: PendingOutcome[] = [];
  private delivering = false;
  /** Calls issued and not yet settled into `outcomes`: in flight, about to be sent, or waiting (`waits`). */
  private openCalls = 0;
  /** Open calls that wait on the engine (timers, signals, decisions), by seq. */
  private readonly waits = new Map<number, OpenWait>();
  /** Cancels the timer of a wait, by seq. */
  private readonly timers = new Map<number, () => void>();
  /** Signals taken by outcomes not yet journaled: another call must not take them too. */
  private readonly claimedSignals = new Set<number>();
  /** The set of calls waiting for a decision (or a worker) changed: the next append writes it to the run. */
  private decisionsChanged = false;
  /** Host tool calls no worker has taken for a while: shown in the run's waits while it runs. */
  private readonly unserved: UnservedCalls;
  /** Set once the open calls of the journal are known; requests that need them wait until then. */
  private ready = false;
  private readonly whenReady: (() => void)[] = [];
  /** Parking: writing `waiting`, then freeing the sandbox. Requests then go to the next execution. */
  private parking = false;
  private advancing = false;
  /** Reads of kept signals in flight: the run must not park before they answer. */
  private lookups = 0;
  /**
   * Appends not yet durable. The run does not park (nor jump virtual time) while one is in flight:
   * what follows a write (a call sent, a decision requested from the harness) may add work.
   */
  private writes = 0;
  private ended = false;
  /** Sandboxes rebuilt after their worker died while running this run's own request. */
  private rebuilds = 0;
  /** Sandboxes lost because another sandbox's script ended their shared worker. */
  private neighbourLosses = 0;
  /** Failures delivered to the script, by seq: what its error may report as a call's failure. */
  private readonly failuresDelivered = new Map<number, ToolFailure>();
  /** The run had host faults counted when this execution began: its first commit of progress clears them. */
  private faultsToClear = false;
  /** Settles when the latest append is durable (or failed): what a rebuild waits for. */
  private lastWrite: Promise<void> = Promise.resolve();
  /** For a fork: the parent's results its calls may take instead of being sent. */
  private reuse: ReusePool | undefined;
  /** The tool of every call issued, for error reports. */
  private readonly toolOfSeq = new Map<number, string>();
  private stopped = false;
  private readonly done: Promise<ExecutionResult>;
  /** Settles once the journal has been read and `nextIndex` is known. */
  private readonly loaded: Promise<void>;
  private markLoaded!: () => void;
  private resolveDone!: (result: ExecutionResult) => void;
  private rejectDone!: (error: unknown) => void;

  constructor(
    private readonly run: RunRecord,
    private readonly toolset: LoadedToolset,
    private readonly deps: ExecutorDeps,
  ) {
    this.dispatcher = new RunDispatcher(run.id, deps.source, {
      runConcurrency: deps.limits.runConcurrency,
      maxAttempts: deps.limits.maxAttempts,
      maxValueBytes: deps.limits.maxValueBytes,
      clock: deps.clock,
    });
    this.unserved = new UnservedCalls(deps.clock, UNSERVED_NOTICE_MS, () => this.writeWaits());
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
  execute(): Promise<ExecutionResult> {
    if (this.stopped) return this.done;
    this.begin().catch((error: unknown) => this.fault(error));
    return this.done;
  }

  private async begin(): Promise<void> {
    const entries = await this.deps.store.readJournal(this.run.id);
    const history = readHistory(this.run.id, entries);
    if (history.traceparent !== undefined) this.dispatcher.joinTrace(history.traceparent);
    if (this.run.parentId) this.reuse = new ReusePool(this.run.parentId, reusableWorkflowCalls(await this.deps.store.readJournal(this.run.parentId)), entries);
    this.nextIndex = history.length;
    this.logCount = history.logCount;
    this.markLoaded();
    if (history.end) {
      this.ended = true;
      this.resolveDone(endOf(history.end));
      return;
    }
    // Read now: taking the lease over from a process that died under the run counted a fault.
    const faults = (await this.deps.store.getRun(this.run.id))?.hostFaults;
    if (faults !== undefined && tooManyHostFaults(faults)) {
      this.endWith([], { status: "failed", error: hostFaultError(faults) }, this.deps.clock.now());
      return;
    }
    this.faultsToClear = faults !== undefined;
    const replayed = await this.replayed(history);
    if (replayed === undefined) return;
    if (!replayed.ok) {
      this.endWith([], { status: "failed", error: runError("divergence", replayed.divergence) }, this.deps.clock.now());
      return;
    }
    const { fresh } = replayed;
    for (const call of history.calls.values()) this.toolOfSeq.set(call.seq, call.tool);
    if (!fresh.end) this.resumeOpenCalls(history);
    this.ready = true;
    // Calls shown waiting for a worker by an engine that stopped are this engine's to show again.
    if (this.run.waits?.some((wait) => wait.kind === "worker")) this.writeWaits();
    // Requests that arrived while the journal was replayed (a decision) apply before the run can park.
    for (const request of this.whenReady.splice(0)) request();
    this.onStep(fresh, undefined);
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
        if (this.ended) {
          // Cancelled (or stopped) while the sandbox was being made.
          await sandbox.dispose();
          return undefined;
        }
        this.sandbox = sandbox;
        return await replayHistory(sandbox, history);
      } catch (error) {
        this.sandbox = undefined;
        void sandbox?.dispose().catch(() => {});
        const next = this.sandboxFailure(error);
        if (next.action === "fault") throw error;
        if (next.action === "end") {
          this.endWith([], next.end, this.deps.clock.now());
          return undefined;
        }
        if (this.ended) return undefined;
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
      `The sandbox running this script was lost ${this.rebuilds} times while running it (the last time: ${error.message}). ` +
      "The script itself is what makes it fail (through a fault of the sandbox); change what it does at its last step, and fork the run (retry_run).";
    return { action: "end", end: { status: "failed", error: runError("internal", message) } };
  }

  private noteDelivered(delivery: Delivery): void {
    if (!delivery.ok) this.failuresDelivered.set(delivery.seq, delivery.error);
  }

  private deliveredFailure(seq: number): DeliveredFailure | undefined {
    const failure = this.failuresDelivered.get(seq);
    return failure === undefined ? undefined : { tool: this.toolOfSeq.get(seq) ?? "", failure };
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

  /**
   * The open calls of the journal: waits are waited for again; a call that needed a decision
   * waits for it, or is settled or sent as decided; a call that was sent was interrupted by the
   * engine's death (or its parking) and its policy decides.
   */
  private resumeOpenCalls(history: History): void {
    for (const call of history.calls.values()) {
      if (call.settled || call.rejected) continue;
      if (isBuiltin(call.tool)) {
        this.openCalls++;
        this.startBuiltin(call.seq, call.tool, call.args);
        continue;
      }
      const tool = this.toolset.byPath.get(call.tool);
      if (!tool) throw new Error(`call #${call.seq} names ${call.tool}, which the run's toolset does not have`);
      if (call.parked) {
        this.openCalls++;
        this.addWait({ kind: "parked", seq: call.seq, tool, args: call.args, ...call.parked });
      } else if (call.decision?.decision === "rejected") {
        this.openCalls++;
        this.settle(call.seq, { ok: false, error: approvalRejected(call.tool, call.decision.reason) });
      } else if (tool.policy.approval && !call.decision) {
        this.openCalls++;
        this.addWait({ kind: "approval", seq: call.seq, tool, args: call.args });
      } else {
        this.resend(call.seq, tool, call.args, call.attempts, call.schemaChangeApproved === true);
      }
    }
  }

  /** Journals what the script did in one step (after `outcome`, if it reacted to one) and acts on it. */
  private onStep(step: Step, outcome: { event: JournalEvent; at: number; seq: number; signalId?: number } | undefined): void {
    const at = outcome?.at ?? this.deps.clock.now();
    const events: JournalEvent[] = outcome ? [outcome.event] : [];
    for (const call of step.calls) this.toolOfSeq.set(call.seq, call.tool);
    const toSend: { seq: number; tool: PinnedTool; args: JsonValue }[] = [];
    const builtins: IssuedCall[] = [];
    /** Workflow calls act outside the run (a child run, a signal): started once the step is durable, like a sent call. */
    const workflowCalls: IssuedCall[] = [];
    const approvals: DecisionWait[] = [];
    if (step.end) {
      for (const call of step.calls) events.push(unsentWarning(call));
    } else {
      for (const call of step.calls) {
        const checked = this.checkCall(call);
        if ("failure" in checked) {
          const entry: JournalEvent = { kind: "call.rejected", seq: call.seq, tool: call.tool, args: checked.args, error: checked.failure };
          events.push(entry);
          // Delivered at the time of the entry that records it, exactly as replay will.
          this.prejournaled.push({ delivery: { seq: call.seq, at, ok: false, error: checked.failure } });
        } else {
          events.push({ kind: "call.scheduled", seq: call.seq, tool: call.tool, args: checked.args, key: this.key(call.seq) });
          const reused = this.reuse?.take(call.tool, checked.args);
          if (reused) {
            // A fork's call answered from its parent's journal: recorded here, never sent.
            events.push({ kind: "call.completed", seq: call.seq, result: reused.result, reusedFrom: { run: this.reuse!.parentId, seq: reused.parentSeq } });
            this.prejournaled.push({ delivery: { seq: call.seq, at, ok: true, value: reused.result } });
          } else if (!checked.tool) {
            (isWorkflowCall(call.tool) ? workflowCalls : builtins).push({ seq: call.seq, tool: call.tool, args: checked.args });
          } else if (checked.tool.policy.approval) {
            // Scheduled, not sent: it waits for a decision, which is journaled before it is sent.
            this.openCalls++;
            this.addWait({ kind: "approval", seq: call.seq, tool: checked.tool, args: checked.args });
            approvals.push({ kind: "approval", seq: call.seq, tool: call.tool, args: checked.args });
          } else {
            toSend.push({ seq: call.seq, tool: checked.tool, args: checked.args });
          }
        }
      }
    }
    for (const log of step.logs) events.push(this.logEvent(log));
    if (step.end) {
      const end: RunEnd = step.end.ok
        ? this.checkOutput(step.end.output)
        : { status: "failed", error: guestErrorToRunError(step.end.error, this.run, (seq) => this.deliveredFailure(seq)) };
      // The signal the last outcome took is consumed with the end too, or it would stay pending.
      this.endWith(events, end, at, outcome?.signalId === undefined ? undefined : [{ id: outcome.signalId, seq: outcome.seq }]);
      return;
    }
    this.openCalls += toSend.length + builtins.length + workflowCalls.length;
    const consumed = outcome?.signalId === undefined ? undefined : { updatedAt: at, consumeSignals: [{ id: outcome.signalId, seq: outcome.seq }] };
    const patch = this.withEvents(
      consumed,
      at,
      approvals.map((wait) => decisionEvent(this.run.id, wait)),
    );
    this.append(events, at, patch).then(
      () => {
        for (const call of toSend) this.send(call.seq, call.tool, call.args, 1);
        for (const call of workflowCalls) this.startBuiltin(call.seq, call.tool, call.args);
        for (const wait of approvals) this.deps.onDecisionNeeded?.(this.run.id, wait);
      },
      (error: unknown) => this.fault(error),
    );
    for (const call of builtins) this.startBuiltin(call.seq, call.tool, call.args);
    this.pump();
  }

  /** A call that may be scheduled (`tool` is undefined for a built-in), or why it is rejected. */
  private checkCall(call: IssuedCall): { tool: PinnedTool | undefined; args: JsonValue } | { failure: ToolFailure; args: JsonValue } {
    // The sandbox refuses such arguments already; a sandbox that did not must not fault the engine.
    const problem = valueProblem(call.args, { refuseLoneSurrogates: true });
    if (problem !== undefined) return { args: null, failure: toolFailure("invalid_arguments", `The arguments of ${call.tool} are refused: ${problem}.`) };
    const args = canonicalValue(call.args);
    if (isBuiltin(call.tool)) {
      const parsed = parseBuiltin(call.tool, args);
      const workflow =
        "message" in parsed
          ? undefined
          : parsed.kind === "workflow.start" || parsed.kind === "workflow.result" || parsed.kind === "workflow.signal"
            ? parsed
            : undefined;
      // A workflow call is checked against the toolset's workflows like a tool call against its schema.
      const failure = "message" in parsed ? parsed : workflow && checkWorkflowCall(workflow, this.toolset.workflows, this.deps.workflows.schemas);
      return failure ? { args, failure } : { tool: undefined, args };
    }
    const tool = this.toolset.byPath.get(call.tool);
    if (!tool) return { args, failure: toolFailure("unknown_tool", `The toolset has no tool ${call.tool}.`) };
    const bytes = Buffer.byteLength(JSON.stringify(args));
    if (bytes > this.deps.limits.maxValueBytes) {
      return {
        args: null,
        failure: toolFailure(
          "invalid_arguments",
          `The arguments of ${call.tool} are ${bytes} bytes; one recorded value may be at most ${this.deps.limits.maxValueBytes} bytes.`,
        ),
      };
    }
    const failure = this.toolset.validator.validate(tool, args);
    return failure ? { args, failure } : { tool, args };
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

  private key(seq: number): string {
    return `${this.run.id}/${seq}`;
  }

  /**
   * Sends a new call (attempt 1) or continues one from `attempt`. `openCalls` already counts it.
   * Its source checks every attempt against the tool as it is now, and parks the call when it
   * changed (`tool.schema_changed`), unless the harness approved it after such a park.
   */
  private send(seq: number, tool: PinnedTool, args: JsonValue, attempt: number, schemaChangeApproved = false): void {
    const recordAttempt = (n: number, reason: string) => this.append([{ kind: "call.attempt", seq, attempt: n, reason }], this.deps.clock.now());
    const queue = tool.source === "host" ? { queue: this.unserved.watcher(seq, toolPath(tool)) } : {};
    this.dispatcher
      .dispatch({ seq, tool, args, key: this.key(seq), attempt, recordAttempt, ...queue, ...(schemaChangeApproved ? { schemaChangeApproved } : {}) })
      .then((dispatched) => ("parked" in dispatched ? this.parkCall(seq, tool, args, dispatched.parked) : this.settle(seq, dispatched)))
      .catch((error: unknown) => this.fault(error));
  }

  /** Holds an open call back (`call.parked`) until the harness decides; approving sends it as it is. */
  private parkCall(seq: number, tool: PinnedTool, args: JsonValue, park: Park): void {
    if (this.ended) return;
    this.addWait({ kind: "parked", seq, tool, args, ...park });
    const credential = park.credential === undefined ? {} : { credential: park.credential };
    const described: DecisionWait = { kind: "parked", seq, tool: toolPath(tool), args, reason: park.reason, message: park.message, ...credential };
    const at = this.deps.clock.now();
    this.append(
      [{ kind: "call.parked", seq, reason: park.reason, message: park.message, ...credential }],
      at,
      this.withEvents(undefined, at, [decisionEvent(this.run.id, described)]),
    ).then(
      () => this.deps.onDecisionNeeded?.(this.run.id, described),
      (error: unknown) => this.fault(error),
    );
  }

  /**
   * A call the engine's death interrupted after `attempts` attempts: its policy decides, unless
   * its source still has that attempt (a host task no worker took yet): then it goes on as it is.
   */
  private resend(seq: number, tool: PinnedTool, args: JsonValue, attempts: number, schemaChangeApproved: boolean): void {
    this.openCalls++;
    const stands = this.deps.source.resumes?.({ tool, runId: this.run.id, seq, attempt: attempts });
    if (stands === undefined) return this.interrupted(seq, tool, args, attempts, schemaChangeApproved);
    stands.then(
      (yes) => (yes ? this.send(seq, tool, args, attempts, schemaChangeApproved) : this.interrupted(seq, tool, args, attempts, schemaChangeApproved)),
      (error: unknown) => this.fault(error),
    );
  }

  private interrupted(seq: number, tool: PinnedTool, args: JsonValue, attempts: number, schemaChangeApproved: boolean): void {
    const reason = "the engine stopped while the call was in flight";
    if (tool.policy.onInterruption === "at_most_once") return this.settle(seq, { ok: false, error: outcomeUnknown(reason) });
    if (attempts >= this.deps.limits.maxAttempts) return this.settle(seq, { ok: false, error: tooManyAttempts(attempts, reason) });
    this.append([{ kind: "call.attempt", seq, attempt: attempts + 1, reason }], this.deps.clock.now()).then(
      () => this.send(seq, tool, args, attempts + 1, schemaChangeApproved),
      (error: unknown) => this.fault(error),
    );
  }

  private settle(seq: number, settled: Settled, signalId?: number): void {
    if (this.ended) return;
    this.unserved.settled(seq);
    if (settled.notBefore !== undefined && settled.notBefore > this.deps.clock.now()) {
      // A mock's delay under a virtual clock: the outcome waits for the clock like a sleep.
      const { notBefore, ...rest } = settled;
      this.addWait({ kind: "timed", seq, until: notBefore, settled: rest });
      this.pump();
      return;
    }
    if (settled.ok && this.deps.observe) {
      const tool = this.toolset.byPath.get(this.toolOfSeq.get(seq) ?? "");
      if (tool) this.deps.observe(tool, settled.value);
    }
    this.openCalls--;
    this.outcomes.push({ seq, settled, ...(signalId === undefined ? {} : { signalId }) });
    this.pump();
  }

  /** Delivers the next outcome if the sandbox is idle: pre-journaled ones first, then live outcomes. */
  private pump(): void {
    if (this.delivering || this.ended || this.stopped || !this.sandbox) return;
    if (this.prejournaled.length === 0 && this.outcomes.length > 1 && this.sandbox.deliverEach)
      return this.deliverBatch(this.sandbox.deliverEach.bind(this.sandbox));
    const prejournaled = this.prejournaled.shift();
    const outcome = prejournaled ? undefined : this.outcomes.shift();
    if (!prejournaled && !outcome) {
      this.onIdle();
      return;
    }
    let delivery: Delivery;
    let entry: { event: JournalEvent; at: number; seq: number; signalId?: number } | undefined;
    if (prejournaled) {
      delivery = prejournaled.delivery;
    } else {
      const { seq, settled, signalId } = outcome!;
      const at = this.deps.clock.now();
      delivery = settled.ok ? { seq, at, ok: true, value: settled.value } : { seq, at, ok: false, error: settled.error };
      const event: JournalEvent = settled.ok ? { kind: "call.completed", seq, result: settled.value } : { kind: "call.failed", seq, error: settled.error };
      entry = { event, at, seq, ...(signalId === undefined ? {} : { signalId }) };
    }
    this.delivering = true;
    this.noteDelivered(delivery);
    this.sandbox.deliver(delivery).then(
      (step) => {
        this.delivering = false;
        this.onStep(step, entry);
      },
      // A live outcome is journaled only with the step that reacts to it: deliver it again (or
      // journal it with the end). A pre-journaled one is in the journal, and the replay delivers it.
      (error: unknown) => this.onSandboxError(error, outcome ? [outcome] : [], entry ? [entry.event] : []),
    );
  }

  /**
   * Delivers the live outcomes that arrived together in one round trip, then journals each with
   * the step that reacts to it, in order, as separate deliveries would (their appends share a
   * commit). Calls answered together (a `Promise.all` of 16) cost one worker hop, not 16.
   */
  private deliverBatch(deliverEach: (deliveries: readonly Delivery[]) => Promise<Step[]>): void {
    const batch = this.outcomes.splice(0, MAX_DELIVERIES_PER_HOP);
    const at = this.deps.clock.now();
    const deliveries = batch.map(({ seq, settled }): Delivery =>
      settled.ok ? { seq, at, ok: true, value: settled.value } : { seq, at, ok: false, error: settled.error },
    );
    const entries = batch.map(({ seq, settled, signalId }) => ({
      event: (settled.ok ? { kind: "call.completed", seq, result: settled.value } : { kind: "call.failed", seq, error: settled.error }) satisfies JournalEvent,
      at,
      seq,
      ...(signalId === undefined ? {} : { signalId }),
    }));
    this.delivering = true;
    for (const delivery of deliveries) this.noteDelivered(delivery);
    deliverEach(deliveries).then(
      (steps) => {
        // Still `delivering` while the steps are journaled one by one: the run is not idle (nor
        // deadlocked) between them. After the step that ends the script, the rest are dropped.
        steps.forEach((step, i) => this.onStep(step, entries[i]));
        this.delivering = false;
        this.pump();
      },
      (error: unknown) =>
        this.onSandboxError(
          error,
          batch,
          entries.map((entry) => entry.event),
        ),
    );
  }

  /**
   * The sandbox failed under a delivery of `outcomes` (live, not journaled yet): rebuilt, they
   * are delivered again; if the run ends instead, they are journaled with the end (`events`), so
   * that its journal replays to the same end.
   */
  private onSandboxError(error: unknown, outcomes: readonly PendingOutcome[], events: readonly JournalEvent[]): void {
    const next = this.sandboxFailure(error);
    if (next.action === "fault") return this.fault(error);
    if (next.action === "end") {
      this.delivering = false;
      return this.endWith([...events], next.end, this.deps.clock.now());
    }
    this.outcomes.unshift(...outcomes);
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
    await this.lastWrite;
    const history = readHistory(this.run.id, await this.deps.store.readJournal(this.run.id));
    if (this.ended) return;
    const replayed = await this.replayed(history);
    if (replayed === undefined) return;
    if (!replayed.ok) throw new Error(`rebuilding the lost sandbox of ${this.run.id} diverged: ${replayed.divergence}`);
    // Every pre-journaled delivery is durable by now, so the replay has just delivered it.
    this.prejournaled.length = 0;
    this.delivering = false;
    this.onStep(replayed.fresh, undefined);
  }

  /**
   * The script waits and nothing is left to deliver. If nothing is open, nothing can ever settle
   * its promise: it fails now. If only waits are open, it parks (or, under a virtual clock, time
   * jumps to the next timer); a timer due very soon is waited for with the sandbox kept.
   */
  private onIdle(): void {
    if (this.ended || this.stopped || this.delivering || this.parking || this.advancing) return;
    if (this.prejournaled.length + this.outcomes.length > 0) return;
    if (this.openCalls === 0) {
      const error = runError(
        "deadlock",
        "The script is waiting for a promise that nothing can settle: no tool call is in flight and nothing is awaited (sleep, signal, approval). Await only promises of tool calls (or values), and make sure the default export returns.",
      );
      this.endWith([], { status: "failed", error }, this.deps.clock.now());
      return;
    }
    // Calls are in flight (or about to be), a kept signal is being read, or a write may add work.
    if (this.openCalls > this.waits.size || this.lookups > 0 || this.writes > 0) return;
    const virtual = this.deps.clock.virtual;
    // Under a virtual clock a child executing here is like a call in flight: time moves when it is idle, not before.
    if (virtual && [...this.waits.values()].some((wait) => wait.kind === "child" && this.deps.workflows.executing(wait.runId))) return;
    if (virtual) {
      this.advancing = true;
      virtual.advance().then(
        (moved) => {
          this.advancing = false;
          if (moved) this.pump();
          else this.park();
        },
        (error: unknown) => this.fault(error),
      );
      return;
    }
    const due = earliestDue(this.waits.values());
    if (due !== undefined && due - this.deps.clock.now() <= this.deps.limits.holdWaitMs) return;
    this.park();
  }

  /** Only waits are open: the run becomes `waiting`, frees its sandbox, and this execution ends. */
  private park(): void {
    this.parking = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    const waits = describeWaits(this.waits.values());
    const wakeAt = earliestDue(this.waits.values());
    const at = this.deps.clock.now();
    const parked: RunEvent = { type: "run.waiting", runId: this.run.id, waits, ...(wakeAt === undefined ? {} : { wakeAt }) };
    this.append([], at, this.withEvents({ status: "waiting", updatedAt: at, waits, wakeAt: wakeAt ?? null }, at, [parked])).then(
      () => {
        this.ended = true;
        this.dispatcher.abandon();
        void this.release();
        this.resolveDone({ status: "waiting", waits, ...(wakeAt === undefined ? {} : { wakeAt }) });
      },
      (error: unknown) => this.fault(error),
    );
  }

  // ---- waits ----

  private addWait(wait: OpenWait): void {
    this.waits.set(wait.seq, wait);
    if (wait.kind === "approval" || wait.kind === "parked") this.decisionsChanged = true;
    // A signal's timeout is armed once the kept signals have been read: a signal kept in time wins.
    if (wait.kind === "sleep" || wait.kind === "timed") this.armTimer(wait.seq, wait.until);
  }

  private armTimer(seq: number, at: number): void {
    this.timers.set(
      seq,
      this.deps.clock.setTimer(at, () => this.onTimer(seq)),
    );
  }

  /** Removes an open wait (its call is about to be settled or sent); false if it is not open. */
  private takeWait(seq: number): OpenWait | undefined {
    const wait = this.waits.get(seq);
    if (!wait) return undefined;
    this.waits.delete(seq);
    this.timers.get(seq)?.();
    this.timers.delete(seq);
    if (wait.kind === "approval" || wait.kind === "parked") this.decisionsChanged = true;
    return wait;
  }

  private onTimer(seq: number): void {
    const wait = this.waits.get(seq);
    if (!wait || this.ended || this.parking) return;
    this.takeWait(seq);
    if (wait.kind === "sleep") this.settle(seq, { ok: true, value: null });
    else if (wait.kind === "signal") this.settle(seq, { ok: false, error: signalTimedOut(wait.name, wait.timeoutMs) });
    else if (wait.kind === "timed") this.settle(seq, wait.settled);
  }

  /** Starts a built-in call; `openCalls` already counts it. */
  private startBuiltin(seq: number, tool: string, args: JsonValue): void {
    const call = parseBuiltin(tool, args);
    if ("message" in call) return this.settle(seq, { ok: false, error: call });
    switch (call.kind) {
      case "sleep":
        if (call.until <= this.deps.clock.now()) return this.settle(seq, { ok: true, value: null });
        return this.addWait({ kind: "sleep", seq, until: call.until });
      case "signal":
        this.addWait({ ...call, seq });
        return this.lookForSignal(seq, call.name);
      case "webhook":
        this.deps.createWebhook(this.run.id, call.name).then(
          (url) => this.settle(seq, { ok: true, value: { url } }),
          (error: unknown) => this.fault(error),
        );
        return;
      case "workflow.start":
        return this.settleWith(seq, this.deps.workflows.start(this.run, seq, call.name, call.input));
      case "workflow.signal":
        return this.settleWith(seq, this.deps.workflows.signal(this.run.id, seq, call.id, call.signal, call.payload));
      case "workflow.result":
        this.addWait({ kind: "child", seq, runId: call.id, workflow: call.name });
        return this.lookForChild(seq);
    }
  }

  /** Settles call `seq` with what `outcome` resolves with; its rejection is a fault of the engine. */
  private settleWith(seq: number, outcome: Promise<Settled>): void {
    outcome.then(
      (settled) => this.settle(seq, settled),
      (error: unknown) => this.fault(error),
    );
  }

  /** Settles the `result()` wait `seq` if its child run has ended (else it waits for `notifyChild`). */
  private lookForChild(seq: number): void {
    const wait = this.waits.get(seq);
    if (!wait || wait.kind !== "child") return;
    const workflow = this.toolset.workflows[wait.workflow];
    if (!workflow) {
      this.takeWait(seq);
      return this.settle(seq, { ok: false, error: toolFailure("unknown_tool", `The toolset pins no workflow ${wait.workflow}.`) });
    }
    this.lookups++;
    this.deps.workflows.result(this.run.id, wait.workflow, workflow, wait.runId).then(
      (settled) => {
        this.lookups--;
        if (this.ended || this.waits.get(seq) !== wait) return this.pump();
        if (!settled) return this.pump();
        this.takeWait(seq);
        this.settle(seq, settled);
      },
      (error: unknown) => this.fault(error),
    );
  }

  /**
   * The child run `childId` ended (or, under a virtual clock, parked): the `result()` calls
   * waiting for it look again. False when this execution is parking: the engine wakes the run instead.
   */
  notifyChild(childId: string): boolean {
    if (this.parking || this.ended) return false;
    if (!this.ready) return true; // resuming the open calls reads the child's state
    for (const wait of [...this.waits.values()]) if (wait.kind === "child" && wait.runId === childId) this.lookForChild(wait.seq);
    // Under a virtual clock a parked child no longer drives time: this run may now advance it.
    queueMicrotask(() => this.pump());
    return true;
  }

  /** Settles the signal wait `seq` with the oldest kept signal of its name that no other call has taken, if there is one. */
  private lookForSignal(seq: number, name: string): void {
    this.lookups++;
    this.deps.store.pendingSignals(this.run.id, name).then(
      (signals) => {
        this.lookups--;
        const signal = signals.find((s) => !this.claimedSignals.has(s.id));
        const wait = this.waits.get(seq);
        if (!wait || wait.kind !== "signal" || this.ended) return this.pump();
        if (signal) {
          this.claimedSignals.add(signal.id);
          this.takeWait(seq);
          this.settle(seq, { ok: true, value: signal.payload }, signal.id);
        } else if (wait.until !== undefined && wait.until <= this.deps.clock.now()) {
          this.onTimer(seq);
        } else {
          if (wait.until !== undefined && !this.timers.has(seq)) this.armTimer(seq, wait.until);
          this.pump();
        }
      },
      (error: unknown) => this.fault(error),
    );
  }

  /**
   * A signal `name` was kept for this run: the oldest open `signal(name)` call looks for it.
   * False when this execution is parking: the engine resumes the run instead.
   */
  notifySignal(name: string): boolean {
    if (this.parking || this.ended) return false;
    if (!this.ready) return true; // resuming the open calls reads the kept signals
    const waiting = [...this.waits.values()].filter((w) => w.kind === "signal" && w.name === name).sort((a, b) => a.seq - b.seq);
    for (const wait of waiting) this.lookForSignal(wait.seq, name);
    return true;
  }

  /**
   * Decides on a call waiting for approval (or parked): the decision is journaled; then an
   * approved call is sent, a rejected one fails with `approval_rejected`. Resolves once the
   * decision is durable; false when this execution is parking (the engine retries on the next).
   */
  decide(seq: number, decision: Decision, reason: string | undefined): Promise<boolean> {
    if (this.parking || this.ended) return Promise.resolve(false);
    if (!this.ready) {
      return new Promise<boolean>((resolve, reject) => {
        this.whenReady.push(() => {
          this.decide(seq, decision, reason).then(resolve, reject);
        });
      });
    }
    const wait = this.waits.get(seq);
    if (!wait || (wait.kind !== "approval" && wait.kind !== "parked")) {
      return Promise.reject(new EngineError("conflict", `Call #${seq} of run ${this.run.id} is not waiting for a decision.`));
    }
    this.takeWait(seq);
    const event: JournalEvent = { kind: "call.decided", seq, decision, ...(reason === undefined ? {} : { reason }) };
    const written = this.append([event], this.deps.clock.now());
    if (decision === "approved") {
      // An approved call is checked like any new call; one approved after its tool changed goes as it is.
      const go = () => this.send(seq, wait.tool, wait.args, 1, wait.kind === "parked" && wait.reason === "tool.schema_changed");
      written.then(go, (error: unknown) => this.fault(error));
    } else {
      const path = `${wait.tool.group}.${wait.tool.name}`;
      this.settle(seq, { ok: false, error: wait.kind === "parked" ? parkedRejected(path, wait.reason, reason) : approvalRejected(path, reason) });
    }
    return written.then(() => true);
  }

  private endWith(events: JournalEvent[], end: RunEnd, at: number, consumeSignals?: RunPatch["consumeSignals"]): void {
    if (this.ended || this.parking) return;
    if (this.nextIndex + events.length + 1 > this.deps.limits.maxJournalEntries) {
      // The last step does not fit: only the end is journaled (the slot kept free for it).
      events = [];
      end = { status: "failed", error: journalLimitError(this.deps.limits.maxJournalEntries) };
      consumeSignals = undefined;
    }
    this.ended = true;
    // At once, not when the end is durable: an interruption arriving meanwhile must not make
    // the dispatcher journal and send another attempt after the end.
    this.dispatcher.abandon();
    const { event, patch } = endRecord(end, at);
    // Recorded without the output (up to a value's limit, in every event row): it is the run's,
    // read from the run when the event is fanned out.
    const ended: RunEvent = { type: "run.ended", runId: this.run.id, end: end.status === "completed" ? { status: "completed", output: null } : end };
    // A child's end wakes its parked caller in the same commit, even if this process dies next.
    const wake = this.run.caller ? { wakeRun: this.run.caller.runId } : {};
    const consumed = consumeSignals === undefined ? {} : { consumeSignals };
    this.append([...events, event], at, this.withEvents({ ...patch, waits: null, wakeAt: null, ...wake, ...consumed }, at, [ended]), true).then(
      () => {
        void this.release();
        this.resolveDone(end);
      },
      (error: unknown) => this.fault(error),
    );
  }

  /**
   * Appends events as the next entries of the journal, numbered here in call order; the store
   * keeps that order. Resolves when durable.
   */
  private append(events: readonly JournalEvent[], at: number, patch?: RunPatch, final = false): Promise<void> {
    // After the end, nothing else is journaled (and so nothing waiting on it is sent).
    if (this.ended && !final) return new Promise<void>(() => {});
    const limit = this.deps.limits.maxJournalEntries;
    if (this.nextIndex + events.length > limit - 1 && !final) {
      // Keep one entry free for the end, so a run at its limit still ends cleanly.
      this.endWith([], { status: "failed", error: journalLimitError(limit) }, at);
      return new Promise<void>(() => {});
    }
    const entries = events.map((event, i) => ({ ...event, index: this.nextIndex + i, at }));
    this.nextIndex += entries.length;
    patch = this.withRunState(patch, at);
    if (this.faultsToClear && (patch?.status !== undefined || events.some((event) => event.kind === "call.completed" || event.kind === "call.failed"))) {
      // The run gets past where it was: it parks, ends or takes an outcome. Its host faults are forgotten.
      this.faultsToClear = false;
      patch = { updatedAt: at, ...patch, clearHostFaults: true };
    }
    if (entries.length === 0 && !patch) return Promise.resolve();
    const written = this.deps.store.append(this.run.id, entries, patch);
    this.lastWrite = written.catch(() => {});
    this.writes++;
    // Registered before the caller's reaction, so the idle check runs after it (queued behind it).
    written.then(
      () => {
        this.writes--;
        queueMicrotask(() => this.pump());
      },
      () => this.writes--,
    );
    return written;
  }

  /** `patch` carrying `events` when the engine records them (else as it is). */
  private withEvents(patch: RunPatch | undefined, at: number, events: readonly RunEvent[]): RunPatch | undefined {
    if (!this.deps.recordEvents || events.length === 0) return patch;
    return { updatedAt: at, ...patch, events: [...(patch?.events ?? []), ...events] };
  }

  /**
   * Adds to an append the calls waiting for a decision (or a worker) when they changed: listing
   * approvals reads them from the run, so they are written with the entries that change them.
   */
  private withRunState(patch: RunPatch | undefined, at: number): RunPatch | undefined {
    if (!this.decisionsChanged || patch?.waits !== undefined) {
      if (patch?.waits !== undefined) this.decisionsChanged = false;
      return patch;
    }
    this.decisionsChanged = false;
    const waits = [...describeWaits(this.waits.values(), true), ...this.unserved.waits].sort((a, b) => a.seq - b.seq);
    return { updatedAt: at, waits, ...patch };
  }

  /** Writes the run's waits now: a call began or stopped waiting for a worker. */
  private writeWaits(): void {
    if (this.ended || this.parking) return;
    this.decisionsChanged = true;
    this.append([], this.deps.clock.now()).catch((error: unknown) => this.fault(error));
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
    if (this.stopped) return;
    this.stopped = true;
    this.ended = true;
    // The run stays `running`: a source that keeps calls (host tasks) keeps them for its resume.
    this.dispatcher.abandon(executionSuspended("the run stopped executing in this process; it resumes"));
    void this.release();
    this.rejectDone(error);
    // Requests waiting for the journal (a decision) answer now that they cannot be applied here.
    for (const request of this.whenReady.splice(0)) request();
  }

  private async release(): Promise<void> {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.unserved.close();
    const sandbox = this.sandbox;
    this.sandbox = undefined;
    await sandbox?.dispose().catch(() => {});
  }
}

function journalLimitError(limit: number): RunError {
  return runError(
    "limit",
    `The run's journal reached its limit of ${limit} entries. Split the work into several runs, or make fewer calls and log fewer lines.`,
  );
}

function unsentWarning(call: IssuedCall): JournalEvent {
  const what = isBuiltin(call.tool) ? "was not waited for" : "was not sent";
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
