import { toolFailure, type PinnedWorkflow, type RunWait } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { Store } from "../store/store.js";
import { NO_TELEMETRY, type RunTelemetry } from "../telemetry/run-telemetry.js";
import type { CallOutcome } from "./call-outcome.js";
import { describeWaits, earliestDue, signalTimedOut, type OpenWait } from "./waits.js";
import type { WorkflowHost } from "./workflow-host.js";

/**
 * The open calls of one execution that wait on the engine rather than on a tool source (see
 * `waits.ts` for the kinds): their timers, the kept signals they have claimed, and the reads in
 * flight that may end them (kept signals, child runs).
 *
 * Invariants:
 * - One wait per seq; a wait ends once (`take`), and its timer with it.
 * - A signal is claimed by one wait only, oldest open `signal(name)` call first, and stays
 *   claimed until the outcome that takes it is journaled (it is consumed in that commit).
 * - A signal's timeout is armed only once the kept signals have been read: a signal kept in time wins.
 * - While a read is in flight (`reading`), the execution must not park: its answer may end a wait.
 * - After `close`, no timer is left and no late answer ends a wait.
 */

/** What the waits tell the calls they belong to. */
export interface WaitsHost {
  /** Wait `seq` ended with this outcome (`signalId`: the kept signal it takes). */
  ended(seq: number, outcome: CallOutcome, signalId?: number): void;
  /** Rate-limit wait `seq` is due (taken already): its call tries to take a place in its window again. */
  windowDue(seq: number): void;
  /** A read answered without ending a wait: whether the execution is idle may have changed. */
  changed(): void;
  /** The set of waits needing a decision changed: the run's record must show it. */
  decisionsChanged(): void;
  fault(error: unknown): void;
}

export class OpenWaits {
  readonly #waits = new Map<number, OpenWait>();
  /** Cancels the timer of a wait, by seq. */
  readonly #timers = new Map<number, () => void>();
  /** Signals taken by outcomes not yet journaled: another call must not take them too. */
  readonly #claimed = new Set<number>();
  /** Reads in flight (kept signals, child runs). */
  #reads = 0;
  #closed = false;
  /** Where each wait's span starts and ends (`telemetry/`). */
  telemetry: RunTelemetry = NO_TELEMETRY;

  constructor(
    private readonly runId: string,
    private readonly deps: {
      readonly store: Store;
      readonly clock: Clock;
      readonly workflows: WorkflowHost;
      /** The workflows the run's toolset pins, by name. */
      readonly pinned: Readonly<Record<string, PinnedWorkflow>>;
    },
    private readonly host: WaitsHost,
  ) {}

  get size(): number {
    return this.#waits.size;
  }

  /** Whether a read that may end a wait is in flight. */
  get reading(): boolean {
    return this.#reads > 0;
  }

  get(seq: number): OpenWait | undefined {
    return this.#waits.get(seq);
  }

  values(): IterableIterator<OpenWait> {
    return this.#waits.values();
  }

  add(wait: OpenWait): void {
    this.#waits.set(wait.seq, wait);
    this.telemetry.waitStarted(wait);
    if (wait.kind === "approval" || wait.kind === "parked") this.host.decisionsChanged();
    if (wait.kind === "sleep" || wait.kind === "timed" || wait.kind === "rate_limit") this.#arm(wait.seq, wait.until);
  }

  /** Removes an open wait (its call is about to have an outcome, or be sent); undefined if it is not open. */
  take(seq: number): OpenWait | undefined {
    const wait = this.#waits.get(seq);
    if (!wait) return undefined;
    this.#waits.delete(seq);
    this.telemetry.waitEnded(seq);
    this.#timers.get(seq)?.();
    this.#timers.delete(seq);
    if (wait.kind === "approval" || wait.kind === "parked") this.host.decisionsChanged();
    return wait;
  }

  /** The waits as the harness sees them, in seq order; `onlyDecisions`: those it must decide. */
  describe(onlyDecisions = false): RunWait[] {
    return describeWaits(this.#waits.values(), onlyDecisions);
  }

  /** When the earliest timer is due, if one is. */
  earliestDue(): number | undefined {
    return earliestDue(this.#waits.values());
  }

  /** Whether one of the waits is for a child that executes in this engine now (under a virtual clock, it drives time). */
  waitsForExecutingChild(): boolean {
    return [...this.#waits.values()].some((wait) => wait.kind === "child" && this.deps.workflows.executing(wait.runId));
  }

  /** Ends the signal wait `seq` with the oldest kept signal of its name that no other call has claimed, if there is one. */
  lookForSignal(seq: number, name: string): void {
    this.#reads++;
    this.deps.store.pendingSignals(this.runId, name).then(
      (signals) => {
        this.#reads--;
        const signal = signals.find((s) => !this.#claimed.has(s.id));
        const wait = this.#waits.get(seq);
        if (this.#closed) return;
        if (!wait || wait.kind !== "signal") return this.host.changed();
        if (signal) {
          this.#claimed.add(signal.id);
          this.take(seq);
          this.host.ended(seq, { ok: true, value: signal.payload }, signal.id);
        } else if (wait.until !== undefined && wait.until <= this.deps.clock.now()) {
          this.#onTimer(seq);
        } else {
          if (wait.until !== undefined && !this.#timers.has(seq)) this.#arm(seq, wait.until);
          this.host.changed();
        }
      },
      (error: unknown) => this.host.fault(error),
    );
  }

  /** A signal `name` was kept for the run: the open `signal(name)` calls look for it, oldest first. */
  notifySignal(name: string): void {
    const waiting = [...this.#waits.values()].filter((w) => w.kind === "signal" && w.name === name).sort((a, b) => a.seq - b.seq);
    for (const wait of waiting) this.lookForSignal(wait.seq, name);
  }

  /** Ends the `result()` wait `seq` if its child run has ended (else it waits for `notifyChild`). */
  lookForChild(seq: number): void {
    const wait = this.#waits.get(seq);
    if (!wait || wait.kind !== "child") return;
    const workflow = Object.hasOwn(this.deps.pinned, wait.workflow) ? this.deps.pinned[wait.workflow] : undefined;
    if (!workflow) {
      this.take(seq);
      return this.host.ended(seq, { ok: false, error: toolFailure("unknown_tool", `The toolset pins no workflow ${wait.workflow}.`) });
    }
    this.#reads++;
    this.deps.workflows.result(this.runId, wait.workflow, workflow, wait.runId).then(
      (outcome) => {
        this.#reads--;
        if (this.#closed) return;
        if (this.#waits.get(seq) !== wait || !outcome) return this.host.changed();
        this.take(seq);
        this.host.ended(seq, outcome);
      },
      (error: unknown) => this.host.fault(error),
    );
  }

  /** The child run `childId` ended (or, under a virtual clock, parked): the `result()` calls waiting for it look again. */
  notifyChild(childId: string): void {
    for (const wait of [...this.#waits.values()]) if (wait.kind === "child" && wait.runId === childId) this.lookForChild(wait.seq);
  }

  /** No timer fires and no late answer ends a wait from now on (the execution parks, ends or stops). */
  close(): void {
    this.#closed = true;
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
  }

  #arm(seq: number, at: number): void {
    this.#timers.set(
      seq,
      this.deps.clock.setTimer(at, () => this.#onTimer(seq)),
    );
  }

  #onTimer(seq: number): void {
    const wait = this.#waits.get(seq);
    if (!wait || this.#closed) return;
    this.take(seq);
    if (wait.kind === "sleep") this.host.ended(seq, { ok: true, value: null });
    else if (wait.kind === "signal") this.host.ended(seq, { ok: false, error: signalTimedOut(wait.name, wait.timeoutMs) });
    else if (wait.kind === "timed") this.host.ended(seq, wait.outcome);
    else if (wait.kind === "rate_limit") this.host.windowDue(seq);
  }
}
