import {
  decisionEvent,
  toolPath,
  type Decision,
  type DecisionWait,
  type JournalEvent,
  type JsonValue,
  type PinnedTool,
  type RunEvent,
  type RunWait,
  type SubCallAnswer,
} from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import { EngineError } from "../errors.js";
import { UNSERVED_NOTICE_MS } from "../limits.js";
import type { Park, ToolSource } from "../sources/tool-source.js";
import type { StagedHostTask } from "../store/host-task-store.js";
import type { RunRecord, Store } from "../store/store.js";
import type { LoadedToolset } from "../toolset/loaded-toolset.js";
import { ArgsRedaction } from "../toolset/redacted-args.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import { decideCall, type CallDecision, type CallToDecide, type DecisionContext, type GatedDecision } from "./call-decision.js";
import type { CallOutcome } from "./call-outcome.js";
import { RunDispatcher } from "./dispatcher.js";
import type { RecordedCall } from "./history.js";
import { OpenWaits } from "./open-waits.js";
import { admitCall } from "./rate-gate.js";
import { RunSubCalls } from "./run-sub-calls.js";
import { ACTS_OUTSIDE_THE_RUN, type PrimitiveCall } from "./primitives.js";
import type { ReusePool } from "./reuse-pool.js";
import type { RunJournal } from "./run-journal.js";
import { UnservedCalls } from "./unserved-calls.js";
import { approvalRejected, parkedRejected } from "./waits.js";
import type { WorkflowHost } from "./workflow-host.js";
import type { RunTelemetry } from "../telemetry/run-telemetry.js";

/**
 * Call intake: everything that happens to a run's calls between being issued and having an
 * outcome — validation and the decision (`decideCall`), scheduling in the journal, dispatch to
 * tool sources, primitives, approvals and parks, the waits — without a sandbox. Whoever issues
 * the calls (the executor, for a script; a session of direct tool calls, later) journals what
 * `schedule` returns with its own entries, and is told each outcome (`IntakeHost.outcome`) to
 * journal it with what reacts to it.
 *
 * Invariants:
 * - A call's decision is journaled before it is acted on: a call is sent, a primitive that acts
 *   outside the run (a webhook binding, a child run, a signal to it) started and a decision asked
 *   for only once the batch that schedules it is durable; an attempt after the first only once
 *   its `call.attempt` is.
 * - The same key (`<owner>/<seq>`) on every attempt of a call.
 * - Every call issued has exactly one outcome, unless the intake closes first (`open` counts the
 *   calls that have none yet); after `close`, late results are dropped.
 * - A call whose tool's source this process lacks (`ToolSource.check`: a host tool where no host
 *   tools are served, the CLI deciding a direct session's call) is never sent nor failed here:
 *   nothing is journaled for it past its decision, and it stays open for the process that next
 *   holds the run, which has the source. Failing it would tell the model a lie, for good.
 *
 * A caller without a sandbox (a session of model tool calls, whose journal is keyed by the
 * session's id, so its calls' keys are `{session}/{seq}`) uses it like this:
 *
 *     const intake = new CallIntake(session, toolset, deps, journal, host, schemas);
 *     // On resume: intake.remember(history.calls.values()); intake.resume(history.calls.values());
 *     // For each model turn, its tool calls numbered on from the journal's last seq:
 *     const scheduled = intake.schedule([{ seq, tool: "github.list_issues", args }]);
 *     journal.append(scheduled.events, at, journal.withHostTasks(journal.withEvents(undefined, at, scheduled.runEvents), at, scheduled.hostTasks))
 *       .then(scheduled.onDurable, fault);     // sends the calls, asks for approvals
 *     scheduled.begin();
 *     // scheduled.answered: outcomes known at once (rejected arguments, unknown tools): give them
 *     // to the model as they are; they are journaled with `events` already.
 *     // host.outcome(seq, outcome): journal call.completed / call.failed, then give it to the model.
 *     // host.decisionNeeded(wait): an approval is pending (a wait, shown by intake.shownWaits());
 *     // intake.decide(seq, "approved" | "rejected", reason) journals the decision and acts on it.
 *
 * `session` is the record the journal belongs to (a `RunRecord` today: the store keeps journals
 * by run, and a workflow call starts a child of it); `journal` is any `IntakeJournal` (a
 * `RunJournal` over that record is one). The session's toolset pins no workflows, and a caller
 * that offers no primitives refuses a `tapedeck.*` name before `schedule` (the intake answers
 * primitives for scripts). Nothing here reads a sandbox, a script or a step.
 */

/** What the intake writes itself (decisions, attempts, parks, the shown waits); `RunJournal` is one. */
export type IntakeJournal = Pick<RunJournal, "append" | "withEvents" | "withHostTasks" | "writeWaits" | "waitsChanged">;

/** What the intake tells whoever issues the calls. */
export interface IntakeHost {
  /** Call `seq` has its outcome (live: not journaled yet); `signalId`: the kept signal it takes, consumed in the commit that journals it. */
  outcome(seq: number, outcome: CallOutcome, signalId?: number): void;
  /** A call's request for a decision is durable. */
  decisionNeeded(wait: DecisionWait): void;
  /** Something the execution's idleness depends on changed (a wait armed, a read answered). */
  changed(): void;
  /** A fault of the engine (the store): stop, leaving the run to be resumed. */
  fault(error: unknown): void;
}

export interface IntakeDeps {
  readonly store: Store;
  readonly source: ToolSource;
  readonly clock: Clock;
  readonly limits: {
    readonly runConcurrency: number;
    readonly maxAttempts: number;
    readonly maxValueBytes: number;
    /** Tool calls per sliding minute per namespace, across its runs and sessions (a quota, `rate-gate.ts`); absent: none. */
    readonly namespaceCallsPerMinute?: number;
  };
  /** Starts, reads and signals the child runs of `workflows.<name>` calls. */
  readonly workflows: WorkflowHost;
  /** Binds a new webhook token to the run and signal name; resolves with its URL once durable. */
  readonly createWebhook: (runId: string, name: string) => Promise<string>;
  /** Sees every live result (for observed result types). */
  readonly observe?: (tool: PinnedTool, value: JsonValue) => void;
}

/** A call issued: `seq` in issue order, `args` plain JSON. */
export interface IssuedCall {
  readonly seq: number;
  readonly tool: string;
  readonly args: JsonValue;
  /** The issuer's own approval policy asks a human for this call (a direct tool session's, `direct/approval-decision.ts`): it waits for a decision like a call whose tool's policy requires one. */
  readonly asks?: boolean;
}

/** What scheduling a batch of issued calls gives its issuer to journal and to do. */
export interface ScheduledCalls {
  /** The entries that record the decisions, in seq order: journal them in one batch. */
  readonly events: readonly JournalEvent[];
  /** Outcomes the decisions already hold (rejected, reused), in seq order: journaled with `events`, delivered in this order. */
  readonly answered: readonly { readonly seq: number; readonly outcome: CallOutcome }[];
  /** What the harness is told with the batch (decisions needed), when the engine records events. */
  readonly runEvents: readonly RunEvent[];
  /**
   * The host tasks of the calls sent first thing (`ToolSource.stage`): journal them in the same
   * append as `events` (`RunPatch.hostTasks`, `RunJournal.withHostTasks`), so a call costs no
   * commit of its own. A staged call whose task is not written would never reach a worker.
   */
  readonly hostTasks: readonly StagedHostTask[];
  /** Acts on the decisions once the batch is durable: sends the calls, starts the primitives that act outside the run, asks for decisions. */
  readonly onDurable: () => void;
  /** Starts the primitives that only wait (sleep, signal): call it once the batch is appended. */
  readonly begin: () => void;
}

/** How the intake answers each primitive: the compiler asks for one handler per kind. */
type PrimitiveHandlers = { readonly [K in PrimitiveCall["kind"]]: (seq: number, call: Extract<PrimitiveCall, { readonly kind: K }>) => void };

export class CallIntake {
  /** The open calls that wait on the engine (timers, signals, decisions, children). */
  readonly waits: OpenWaits;
  readonly #dispatcher: RunDispatcher;
  /** Host tool calls no worker has taken for a while: shown in the run's waits while it runs. */
  readonly #unserved: UnservedCalls;
  readonly #context: DecisionContext;
  /** The tool of every call, for error reports and observed shapes. */
  readonly #toolOf = new Map<number, string>();
  /** Calls issued that have no outcome yet: in flight, about to be sent, or waiting (`waits`). */
  #open = 0;
  #reuse: ReusePool | undefined;
  #closed = false;
  /** The host calls recorded for each open call (`call.sub`, user tools), by seq: shared by its attempts. */
  readonly #subCalls = new Map<number, Map<string, SubCallAnswer>>();
  /** By seq, the commits of its sub-calls not yet durable (`RunSubCalls`). */
  readonly #subCallWrites = new Map<number, Map<string, Promise<void>>>();
  /** What each call waiting for its rate-limit window does once it has a place, by seq. */
  readonly #throttled = new Map<number, GatedDecision>();
  /** Redacts `sensitiveParams` in what is journaled and shown (`redacted-args.ts`). */
  readonly #sensitive: ArgsRedaction;
  /**
   * The live arguments of open calls whose journaled (and shown) arguments are redacted, by seq:
   * what an approved call is sent with. Only in memory: a resumed run gets them from its script again,
   * a resumed direct session from its sealed copy (`direct/sealed-call-args.ts`).
   */
  readonly #live = new Map<number, JsonValue>();
  /** Why a resumed call's live values are missing, by seq, when its issuer knows (`resume`). */
  readonly #lostWhy = new Map<number, string>();

  constructor(
    private readonly run: RunRecord,
    private readonly toolset: LoadedToolset,
    private readonly deps: IntakeDeps,
    private readonly journal: IntakeJournal,
    private readonly host: IntakeHost,
    workflowSchemas: SchemaValidator,
  ) {
    this.#dispatcher = new RunDispatcher(run.id, deps.source, { ...deps.limits, clock: deps.clock });
    this.#sensitive = toolset.sensitive ?? ArgsRedaction.ephemeral();
    this.#unserved = new UnservedCalls(deps.clock, UNSERVED_NOTICE_MS, () => {
      if (!this.#closed) this.journal.writeWaits(this.deps.clock.now()).catch((error: unknown) => this.host.fault(error));
    });
    this.waits = new OpenWaits(
      run.id,
      { store: deps.store, clock: deps.clock, workflows: deps.workflows, pinned: toolset.workflows },
      {
        ended: (seq, outcome, signalId) => this.#conclude(seq, outcome, signalId),
        windowDue: (seq) => this.#windowDue(seq),
        changed: () => this.host.changed(),
        decisionsChanged: () => this.journal.waitsChanged(),
        fault: (error) => this.host.fault(error),
      },
    );
    this.#context = {
      tools: toolset.byPath,
      workflows: toolset.workflows,
      validator: toolset.validator,
      workflowSchemas,
      maxValueBytes: deps.limits.maxValueBytes,
      maxAttempts: deps.limits.maxAttempts,
      reusable: (tool, args) => this.#reuse?.peek(tool, args),
      sensitive: this.#sensitive,
    };
  }

  /** Calls issued that have no outcome yet. */
  get open(): number {
    return this.#open;
  }

  /** Whether every open call waits on the engine and no read that may end a wait is in flight: nothing but time or the harness moves the run. */
  get onlyWaits(): boolean {
    return this.#open <= this.waits.size && !this.waits.reading;
  }

  /**
   * Whether nothing but answers from outside moves the run: every open call is a wait or has been
   * handed to its source (dispatched: with the source, or queued for its slot), and no read that
   * may end a wait is in flight. Not while a source is asked whether it still holds an attempt, an
   * attempt's entry is being written, or a kept signal is read: the engine's own next step is then
   * still to come (`host-faults.ts`: the crashes of a run are forgiven only from here).
   */
  get awaitsOnlyAnswers(): boolean {
    return !this.waits.reading && this.#open <= this.waits.size + this.#dispatcher.inFlight;
  }

  /** A fork: its calls may take the parent's results instead of being sent. */
  reuseFrom(pool: ReusePool): void {
    this.#reuse = pool;
  }

  /** Calls go in the trace of `traceparent` (the run was started in one) instead of the run's own. */
  joinTrace(traceparent: string): void {
    this.#dispatcher.joinTrace(traceparent);
  }

  /** Where the spans of the execution's calls and waits go (`telemetry/run-telemetry.ts`). */
  set telemetry(telemetry: RunTelemetry) {
    this.#dispatcher.telemetry = telemetry;
    this.waits.telemetry = telemetry;
  }

  /** `args` of a call of `tool` as the journal records them (sensitive values hashed). */
  recordedArgs(tool: string, args: JsonValue): JsonValue {
    return this.#sensitive.redact(this.toolset.byPath.get(tool), args);
  }

  /** The tool call `seq` names, if it was issued. */
  toolOf(seq: number): string | undefined {
    return this.#toolOf.get(seq);
  }

  /** The waits the run's record shows while it runs: those needing a decision, and calls waiting for a worker. */
  shownWaits(): RunWait[] {
    return [...this.waits.describe(true), ...this.#unserved.waits].sort((a, b) => a.seq - b.seq);
  }

  /** Decides each call just issued and says what to journal; acting on the decisions is left to `onDurable` and `begin`. */
  schedule(calls: readonly IssuedCall[]): ScheduledCalls {
    const events: JournalEvent[] = [];
    const answered: { seq: number; outcome: CallOutcome }[] = [];
    const sends: (() => void)[] = [];
    const outside: (() => void)[] = [];
    const waitsNow: (() => void)[] = [];
    const approvals: DecisionWait[] = [];
    const hostTasks: StagedHostTask[] = [];
    // Calls of tools with a rate limit: they take a place in its window first (`rate-gate.ts`).
    const gated: (() => void)[] = [];
    for (const call of calls) {
      this.#toolOf.set(call.seq, call.tool);
      const decision = decideCall(call, this.#context);
      // The journal (and every event and wait shown) gets the arguments with their sensitive values hashed.
      const recorded = this.#sensitive.redact(this.toolset.byPath.get(call.tool), decision.args);
      if (decision.kind === "reject") {
        events.push({ kind: "call.rejected", seq: call.seq, tool: call.tool, args: recorded, error: decision.failure });
        answered.push({ seq: call.seq, outcome: { ok: false, error: decision.failure } });
        continue;
      }
      if (recorded !== decision.args) this.#live.set(call.seq, decision.args);
      events.push({ kind: "call.scheduled", seq: call.seq, tool: call.tool, args: recorded, key: this.#key(call.seq) });
      switch (decision.kind) {
        case "reuse":
          // A fork's call answered from its parent's journal: recorded here, never sent.
          this.#reuse!.use(decision.reused);
          events.push({
            kind: "call.completed",
            seq: call.seq,
            result: decision.reused.result,
            reusedFrom: { run: this.#reuse!.parentId, seq: decision.reused.parentSeq },
          });
          answered.push({ seq: call.seq, outcome: { ok: true, value: decision.reused.result } });
          break;
        case "primitive": {
          this.#open++;
          const start = () => this.#startPrimitive(call.seq, decision.call);
          (ACTS_OUTSIDE_THE_RUN[decision.call.kind] ? outside : waitsNow).push(start);
          break;
        }
        case "await_approval": {
          // Scheduled, not sent: it waits for a decision, which is journaled before it is sent.
          this.#open++;
          if (this.#gated(decision.tool)) {
            gated.push(() => this.#admit(call.seq, decision));
            break;
          }
          const reason = decision.reason === undefined ? {} : { reason: decision.reason };
          this.waits.add({ kind: "approval", seq: call.seq, tool: decision.tool, args: recorded, ...reason });
          approvals.push({ kind: "approval", seq: call.seq, tool: call.tool, args: recorded, ...reason });
          break;
        }
        default: {
          this.#open++;
          if (decision.kind === "send" && this.#gated(decision.tool)) {
            gated.push(() => this.#admit(call.seq, decision));
            break;
          }
          // A first attempt that goes at once is staged: its source's write rides this batch's commit.
          const first = decision.kind === "send" && decision.attempt === 1 && decision.interrupted === undefined;
          const task = first ? this.#dispatcher.stage(call.seq, decision.tool, decision.args, this.#key(call.seq)) : undefined;
          if (task) hostTasks.push(task);
          sends.push(() => this.#act(call.seq, decision));
        }
      }
    }
    return {
      events,
      answered,
      runEvents: approvals.map((wait) => decisionEvent(this.run.id, wait)),
      hostTasks,
      onDurable: () => {
        for (const admit of gated) admit();
        for (const send of sends) send();
        for (const start of outside) start();
        for (const wait of approvals) this.host.decisionNeeded(wait);
      },
      begin: () => {
        for (const start of waitsNow) start();
      },
    };
  }

  /** The calls a journal recorded, for error reports and observed shapes (whether or not they are resumed). */
  remember(calls: Iterable<RecordedCall>): void {
    for (const call of calls) this.#toolOf.set(call.seq, call.tool);
  }

  /**
   * The open calls of a journal being resumed: waits are waited for again; a call that needed a
   * decision waits for it, or has the outcome or is sent as decided; a call that was sent was
   * interrupted by the engine's stop (or its parking), and its policy decides.
   */
  resume(calls: Iterable<RecordedCall>, live?: ReadonlyMap<number, JsonValue>, unopened?: ReadonlyMap<number, string>): void {
    for (const recorded of calls) {
      if (recorded.hasOutcome || recorded.rejected) continue;
      // Why a call has no live values (a direct session's sealed copy did not open): said if it is approved and so cannot be sent.
      const why = unopened?.get(recorded.seq);
      if (why !== undefined) this.#lostWhy.set(recorded.seq, why);
      // The journal holds sensitive values hashed; a script's replay has made them again (`live`).
      const args = live?.get(recorded.seq);
      const call = args === undefined ? recorded : { ...recorded, args };
      if (args !== undefined && args !== recorded.args) this.#live.set(call.seq, args);
      if (call.subCalls !== undefined) this.#subCalls.set(call.seq, new Map(call.subCalls));
      this.#open++;
      this.#act(call.seq, decideCall({ seq: call.seq, tool: call.tool, args: call.args, recorded: call } satisfies CallToDecide, this.#context));
    }
  }

  /**
   * Decides on a call waiting for approval (or parked): `call.decided` is journaled; then an
   * approved call is sent, a rejected one fails (`approval_rejected`, `schema_changed`).
   * Resolves once the decision is durable; rejects with `conflict` when the call waits for none.
   */
  decide(seq: number, decision: Decision, reason: string | undefined): Promise<void> {
    const wait = this.waits.get(seq);
    if (!wait || (wait.kind !== "approval" && wait.kind !== "parked")) {
      return Promise.reject(new EngineError("conflict", `Call #${seq} of run ${this.run.id} is not waiting for a decision.`));
    }
    this.waits.take(seq);
    const written = this.journal.append([{ kind: "call.decided", seq, decision, ...(reason === undefined ? {} : { reason }) }], this.deps.clock.now());
    if (decision === "approved") {
      // An approved call is checked like any new call; one approved after its tool changed goes as it is.
      const schemaChangeApproved = wait.kind === "parked" && wait.reason === "tool.schema_changed";
      written.then(
        () => this.#send(seq, wait.tool, this.#live.get(seq) ?? wait.args, 1, schemaChangeApproved, 0),
        (error: unknown) => this.host.fault(error),
      );
    } else {
      const path = toolPath(wait.tool);
      this.#conclude(seq, { ok: false, error: wait.kind === "parked" ? parkedRejected(path, wait.reason, reason) : approvalRejected(path, reason) });
    }
    return written;
  }

  /** A signal `name` was kept for the run: the oldest open `signal(name)` call looks for it. */
  notifySignal(name: string): void {
    this.waits.notifySignal(name);
  }

  /** The child run `childId` ended (or, under a virtual clock, parked): the `result()` calls waiting for it look again. */
  notifyChild(childId: string): void {
    this.waits.notifyChild(childId);
  }

  /**
   * Takes no more outcomes: calls in flight are abandoned (their attempts end, their late
   * results are dropped) and no timer is left. At once when the run ends: an interruption
   * arriving meanwhile must not make the dispatcher journal and send another attempt.
   */
  close(reason?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#dispatcher.abandon(reason);
    this.waits.close();
    this.#unserved.close();
  }

  /**
   * Takes a place in the rate-limit window of a call just scheduled (or throttled: `throttled`),
   * then lets it go on: to its tool, or to its approval (asked for now, with the run event the
   * batch would have carried). Past the limit the call fails `rate_limited`, with `retryAfterMs`
   * in its details, or with `onLimit: "wait"` waits for the window (`#throttle`).
   */
  #admit(seq: number, decision: GatedDecision, throttled = false): void {
    const path = toolPath(decision.tool);
    admitCall(this.deps.store.rateLimits, decision.tool, path, this.run.namespace, this.deps.clock.now(), this.deps.limits.namespaceCallsPerMinute).then(
      (check) => {
        if (this.#closed) return;
        if (!check.ok) {
          // `retryAfterMs` 0: no window could ever free (the store keeps none), so waiting would be forever.
          if (decision.tool.policy.rateLimit?.onLimit === "wait" && check.retryAfterMs > 0)
            return this.#throttle(seq, decision, this.deps.clock.now() + check.retryAfterMs);
          return this.#conclude(seq, { ok: false, error: check.failure });
        }
        if (!throttled) return this.#proceed(seq, decision);
        // Journaled before it goes on, so a resumed call does not take a second place (a stop in between errs toward fewer calls).
        this.journal.append([{ kind: "call.admitted", seq }], this.deps.clock.now()).then(
          () => {
            if (!this.#closed) this.#proceed(seq, decision);
          },
          (error: unknown) => this.host.fault(error),
        );
      },
      (error: unknown) => this.host.fault(error),
    );
  }

  /**
   * A call over its limit with `onLimit: "wait"`: `call.throttled` (until when) is journaled, then
   * it waits like a sleep (the run may park, and a restart resumes the wait from the journal). At
   * `until` it tries its window again: calls waiting on one window each take a place atomically,
   * so those that find it full again wait again rather than burst over the limit.
   */
  #throttle(seq: number, decision: GatedDecision, until: number): void {
    this.journal.append([{ kind: "call.throttled", seq, until }], this.deps.clock.now()).then(
      () => this.#waitForWindow(seq, decision, until),
      (error: unknown) => this.host.fault(error),
    );
  }

  #waitForWindow(seq: number, decision: GatedDecision, until: number): void {
    if (this.#closed) return;
    if (until <= this.deps.clock.now()) return this.#admit(seq, decision, true);
    this.#throttled.set(seq, decision);
    this.waits.add({ kind: "rate_limit", seq, tool: decision.tool, until });
    this.host.changed();
  }

  /** Rate-limit wait `seq` is due: its call tries its window again. */
  #windowDue(seq: number): void {
    const decision = this.#throttled.get(seq);
    this.#throttled.delete(seq);
    if (decision !== undefined && !this.#closed) this.#admit(seq, decision, true);
  }

  /** A call that has its place in its window goes on: to its tool, or to its approval. */
  #proceed(seq: number, decision: GatedDecision): void {
    this.#act(seq, decision);
    if (decision.kind !== "await_approval") return;
    const wait: DecisionWait = {
      kind: "approval",
      seq,
      tool: toolPath(decision.tool),
      args: this.#sensitive.redact(decision.tool, decision.args),
      ...(decision.reason === undefined ? {} : { reason: decision.reason }),
    };
    const at = this.deps.clock.now();
    this.journal.append([], at, this.journal.withEvents(undefined, at, [decisionEvent(this.run.id, wait)])).then(
      () => this.host.decisionNeeded(wait),
      (error: unknown) => this.host.fault(error),
    );
  }

  /** Acts on a call's decision (its scheduling is journaled, or it was resumed from the journal); `open` counts it already. */
  #act(seq: number, decision: CallDecision): void {
    switch (decision.kind) {
      case "primitive":
        return this.#startPrimitive(seq, decision.call);
      case "await_approval":
        return this.waits.add({
          kind: "approval",
          seq,
          tool: decision.tool,
          args: this.#sensitive.redact(decision.tool, decision.args),
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        });
      case "park":
        return this.waits.add({ kind: "parked", seq, tool: decision.tool, args: this.#sensitive.redact(decision.tool, decision.args), ...decision.park });
      case "fail":
        return this.#conclude(seq, { ok: false, error: decision.failure });
      case "throttle":
        // Resumed while it waited for its window: it waits for the same `until` (the window is not checked before then).
        return this.#waitForWindow(seq, decision.then, decision.until);
      case "resume": {
        const { tool, args, attempt, stops, otherwise, schemaChangeApproved = false } = decision;
        if (this.#lacksSource(tool)) return;
        const stands = this.deps.source.resumes?.({ tool, runId: this.run.id, seq, idempotencyKey: this.#key(seq), attempt });
        if (stands === undefined) return this.#act(seq, otherwise);
        stands.then(
          (yes) => (yes ? this.#send(seq, tool, args, attempt, schemaChangeApproved, stops) : this.#act(seq, otherwise)),
          (error: unknown) => this.host.fault(error),
        );
        return;
      }
      case "send": {
        const { tool, args, attempt, interrupted, stops = 0, schemaChangeApproved = false } = decision;
        // Before its `call.attempt`: the process that sends it journals the attempt it makes.
        if (this.#lacksSource(tool)) return;
        if (interrupted === undefined) return this.#send(seq, tool, args, attempt, schemaChangeApproved, stops);
        this.journal.append([{ kind: "call.attempt", seq, attempt, reason: interrupted }], this.deps.clock.now()).then(
          () => this.#send(seq, tool, args, attempt, schemaChangeApproved, stops),
          (error: unknown) => this.host.fault(error),
        );
        return;
      }
      case "reject":
      case "reuse":
        throw new Error(`call #${seq}: a ${decision.kind} decision is journaled with the call, not acted on`);
    }
  }

  /**
   * Sends a call from `attempt`. Its source checks every attempt against the tool as it is now,
   * and parks the call when it changed (`tool.schema_changed`), unless the harness approved it
   * after such a park.
   */
  #send(seq: number, tool: PinnedTool, args: JsonValue, attempt: number, schemaChangeApproved: boolean, stops: number): void {
    if (this.#lacksSource(tool)) return;
    // Never a marker to a tool: without its live values (a direct session restarted) the call fails unsent.
    const lost = this.#sensitive.lostValues(tool, toolPath(tool), args, this.#lostWhy.get(seq));
    if (lost !== undefined) return this.#conclude(seq, { ok: false, error: lost });
    const secrets = tool.policy.sensitiveParams === undefined ? {} : { secrets: this.#sensitive.secrets(tool, args) };
    const recordAttempt = (n: number, reason: string) => this.journal.append([{ kind: "call.attempt", seq, attempt: n, reason }], this.deps.clock.now());
    const queue = tool.source === "host" ? { queue: this.#unserved.watcher(seq, toolPath(tool)) } : {};
    const subCalls = tool.source === "user" ? { subCalls: this.#subCallsOf(seq) } : {};
    this.#dispatcher
      .dispatch({
        seq,
        tool,
        args,
        key: this.#key(seq),
        attempt,
        uncounted: stops,
        recordAttempt,
        ...queue,
        ...subCalls,
        ...secrets,
        ...(schemaChangeApproved ? { schemaChangeApproved } : {}),
      })
      .then((dispatched) => ("parked" in dispatched ? this.#park(seq, tool, args, dispatched.parked) : this.#conclude(seq, dispatched)))
      .catch((error: unknown) => this.host.fault(error));
    // Handed to its source, maybe after the run went idle (a source asked first whether it still
    // held the attempt): the execution looks again at whether only answers are awaited now.
    this.host.changed();
  }

  /** Whether a call of `tool` takes a place in a window before it goes on: its tool's rate limit, or its namespace's quota of calls. */
  #gated(tool: PinnedTool): boolean {
    return tool.policy.rateLimit !== undefined || (this.deps.limits.namespaceCallsPerMinute !== undefined && this.run.namespace !== undefined);
  }

  /** Whether this process cannot send calls of `tool` (see the invariants): the call is then left open, unsent. */
  #lacksSource(tool: PinnedTool): boolean {
    return this.deps.source.check?.([tool]) !== undefined;
  }

  /** Where call `seq`'s source records its host calls: the run's journal (`call.sub`). */
  #subCallsOf(seq: number): RunSubCalls {
    let answers = this.#subCalls.get(seq);
    if (answers === undefined) this.#subCalls.set(seq, (answers = new Map<string, SubCallAnswer>()));
    let writing = this.#subCallWrites.get(seq);
    if (writing === undefined) this.#subCallWrites.set(seq, (writing = new Map<string, Promise<void>>()));
    return new RunSubCalls(seq, this.journal, this.deps.clock, answers, (tool, args) => this.#sensitive.redact(this.toolset.byPath.get(tool), args), writing);
  }

  /** Holds an open call back (`call.parked`) until the harness decides; approving sends it as it is. */
  #park(seq: number, tool: PinnedTool, args: JsonValue, park: Park): void {
    if (this.#closed) return;
    const shown = this.#sensitive.redact(tool, args);
    this.waits.add({ kind: "parked", seq, tool, args: shown, ...park });
    const credential = park.credential === undefined ? {} : { credential: park.credential };
    const described: DecisionWait = { kind: "parked", seq, tool: toolPath(tool), args: shown, reason: park.reason, message: park.message, ...credential };
    const at = this.deps.clock.now();
    this.journal
      .append(
        [{ kind: "call.parked", seq, reason: park.reason, message: park.message, ...credential }],
        at,
        this.journal.withEvents(undefined, at, [decisionEvent(this.run.id, described)]),
      )
      .then(
        () => this.host.decisionNeeded(described),
        (error: unknown) => this.host.fault(error),
      );
  }

  /** Call `seq` has its outcome: it goes to the host (a mock's delayed outcome waits for the virtual clock first). */
  #conclude(seq: number, outcome: CallOutcome, signalId?: number): void {
    if (this.#closed) return;
    this.#unserved.done(seq);
    this.#subCalls.delete(seq);
    this.#subCallWrites.delete(seq);
    this.#throttled.delete(seq);
    this.#live.delete(seq);
    this.#lostWhy.delete(seq);
    if (outcome.notBefore !== undefined && outcome.notBefore > this.deps.clock.now()) {
      // A mock's delay under a virtual clock: the outcome waits for the clock like a sleep.
      const { notBefore, ...rest } = outcome;
      this.waits.add({ kind: "timed", seq, until: notBefore, outcome: rest });
      this.host.changed();
      return;
    }
    if (outcome.ok && this.deps.observe) {
      const tool = this.toolset.byPath.get(this.#toolOf.get(seq) ?? "");
      if (tool) this.deps.observe(tool, outcome.value);
    }
    this.#open--;
    this.host.outcome(seq, outcome, signalId);
  }

  /** Starts a primitive call; `open` counts it already. */
  #startPrimitive(seq: number, call: PrimitiveCall): void {
    (this.#primitives[call.kind] as (seq: number, call: PrimitiveCall) => void)(seq, call);
  }

  readonly #primitives: PrimitiveHandlers = {
    sleep: (seq, call) => {
      if (call.until <= this.deps.clock.now()) return this.#conclude(seq, { ok: true, value: null });
      this.waits.add({ kind: "sleep", seq, until: call.until });
    },
    signal: (seq, call) => {
      this.waits.add({ ...call, seq });
      this.waits.lookForSignal(seq, call.name);
    },
    webhook: (seq, call) =>
      this.#concludeWith(
        seq,
        this.deps.createWebhook(this.run.id, call.name).then((url) => ({ ok: true, value: { url } })),
      ),
    "workflow.start": (seq, call) => this.#concludeWith(seq, this.deps.workflows.start(this.run, seq, call.name, call.input)),
    "workflow.signal": (seq, call) => this.#concludeWith(seq, this.deps.workflows.signal(this.run.id, seq, call.id, call.signal, call.payload)),
    "workflow.result": (seq, call) => {
      this.waits.add({ kind: "child", seq, runId: call.id, workflow: call.name });
      this.waits.lookForChild(seq);
    },
  };

  /** Call `seq` has what `outcome` resolves with; its rejection is a fault of the engine. */
  #concludeWith(seq: number, outcome: Promise<CallOutcome>): void {
    outcome.then(
      (answer) => this.#conclude(seq, answer),
      (error: unknown) => this.host.fault(error),
    );
  }

  #key(seq: number): string {
    return `${this.run.id}/${seq}`;
  }
}
