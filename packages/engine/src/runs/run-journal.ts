import type { JournalEvent, RunError, RunEvent, RunWait } from "@tapedeck/protocol";
import type { StagedHostTask } from "../store/host-task-store.js";
import type { RunPatch, Store } from "../store/store.js";
import { runError } from "./run-error.js";
import { noteCommitted, observed } from "../telemetry/engine-observers.js";

/**
 * The journal of one execution as it is written: entries numbered here in the order they are
 * appended, each batch in one commit with the run's state (its waits, its events) and what the
 * batch changes of it.
 *
 * Invariants:
 * - Entries are numbered in call order, without a gap; the store keeps that order and refuses
 *   a batch that does not continue the journal exactly.
 * - The journal never holds more than `maxEntries`, the end included: a batch that would leave no
 *   room for the end is not written, and the run ends with a limit error instead (`onFull`).
 * - After the end (or `close`), nothing else is written: later appends never resolve, so nothing
 *   waiting on one is done.
 * - The calls waiting for a decision (or a worker) are written with the batch that changes them,
 *   so listing approvals, which reads them from the run, never disagrees with the journal.
 * - Host faults counted against the run are cleared by its first batch of progress: an outcome,
 *   a park or the end (see `host-faults.ts`).
 * - Every batch names the lease epoch this execution won (when it has one): once another process
 *   has claimed the run, the store refuses the batch (`LeaseLostError`) and nothing more is written.
 */
export interface JournalOptions {
  readonly maxEntries: number;
  /** Whether run events are written with the batch that makes them happen (`EngineOptions.recordEvents`). */
  readonly recordEvents: boolean;
  /** The waits the run's record shows while it runs: those needing a decision, and calls waiting for a worker. */
  readonly shownWaits: () => RunWait[];
  /** A batch would fill the journal: the run must end with `error` (through `appendEnd`). */
  readonly onFull: (error: RunError, at: number) => void;
  /** A batch became durable: what waited on it may have added work. */
  readonly onDurable: () => void;
}

export class RunJournal {
  #next = 0;
  #closed = false;
  /** Batches not yet durable. */
  #writes = 0;
  #lastWrite: Promise<void> = Promise.resolve();
  /** The shown waits changed: the next batch writes them to the run. */
  #waitsChanged = false;
  #faultsToClear = false;
  /** The lease epoch every batch names (`RunStore.append`); undefined: fenced by the journal's length alone. */
  #epoch: number | undefined;

  constructor(
    private readonly runId: string,
    private readonly store: Store,
    private readonly options: JournalOptions,
  ) {}

  /**
   * Continues a journal of `length` entries; `faultsCounted`: the run had host faults when this
   * execution began; `epoch`: the lease epoch this execution holds the run under.
   */
  open(length: number, faultsCounted: boolean, epoch?: number): void {
    this.#next = length;
    this.#faultsToClear = faultsCounted;
    this.#epoch = epoch;
  }

  /** The index the next entry gets. */
  get nextIndex(): number {
    return this.#next;
  }

  /** Whether a batch is not yet durable: what follows it (a call sent, a decision asked for) may add work. */
  get writing(): boolean {
    return this.#writes > 0;
  }

  /** Settles when the latest batch is durable (or failed). */
  get lastWrite(): Promise<void> {
    return this.#lastWrite;
  }

  /** Whether `events` and the end after them still fit. */
  fitsWithEnd(events: number): boolean {
    return this.#next + events + 1 <= this.options.maxEntries;
  }

  /** Appends events as the next entries, with `patch`, in one commit; resolves when durable. */
  append(events: readonly JournalEvent[], at: number, patch?: RunPatch): Promise<void> {
    // After the end, nothing else is journaled (and so nothing waiting on it is sent).
    if (this.#closed) return new Promise<void>(() => {});
    const limit = this.options.maxEntries;
    if (this.#next + events.length > limit - 1) {
      // Keep one entry free for the end, so a run at its limit still ends cleanly.
      this.options.onFull(journalLimitError(limit), at);
      return new Promise<void>(() => {});
    }
    return this.#write(events, at, patch);
  }

  /** Appends the run's last batch (its end): nothing is journaled after it. */
  appendEnd(events: readonly JournalEvent[], at: number, patch: RunPatch): Promise<void> {
    this.#closed = true;
    return this.#write(events, at, patch);
  }

  /** `patch` carrying `events` when the engine records them (else as it is). */
  withEvents(patch: RunPatch | undefined, at: number, events: readonly RunEvent[]): RunPatch | undefined {
    if (!this.options.recordEvents || events.length === 0) return patch;
    return { updatedAt: at, ...patch, events: [...(patch?.events ?? []), ...events] };
  }

  /** `patch` carrying the host tasks of the calls a batch schedules (`ScheduledCalls.hostTasks`), written in its commit. */
  withHostTasks(patch: RunPatch | undefined, at: number, tasks: readonly StagedHostTask[]): RunPatch | undefined {
    if (tasks.length === 0) return patch;
    return { updatedAt: at, ...patch, hostTasks: [...(patch?.hostTasks ?? []), ...tasks] };
  }

  /** The shown waits changed: the next batch writes them. */
  waitsChanged(): void {
    this.#waitsChanged = true;
  }

  /** Writes the shown waits now (a call began or stopped waiting for a worker). */
  writeWaits(at: number): Promise<void> {
    this.#waitsChanged = true;
    return this.append([], at);
  }

  /** Nothing more is journaled: the execution parked or stopped. */
  close(): void {
    this.#closed = true;
  }

  #write(events: readonly JournalEvent[], at: number, given: RunPatch | undefined): Promise<void> {
    const entries = events.map((event, i) => ({ ...event, index: this.#next + i, at }));
    this.#next += entries.length;
    let patch = this.#withWaits(given, at);
    if (this.#faultsToClear && (patch?.status !== undefined || events.some((event) => event.kind === "call.completed" || event.kind === "call.failed"))) {
      // The run gets past where it was: it parks, ends or takes an outcome. Its host faults are forgotten.
      this.#faultsToClear = false;
      patch = { updatedAt: at, ...patch, clearHostFaults: true };
    }
    if (entries.length === 0 && !patch) return Promise.resolve();
    const since = observed() ? performance.now() : undefined;
    const written = this.store.append(this.runId, entries, patch, this.#epoch);
    this.#lastWrite = written.catch(() => {});
    this.#writes++;
    // Registered before the caller's reaction, so the idle check runs after it (queued behind it).
    written.then(
      () => {
        this.#writes--;
        if (since !== undefined) noteCommitted((performance.now() - since) / 1000);
        queueMicrotask(() => this.options.onDurable());
      },
      () => this.#writes--,
    );
    return written;
  }

  /** Adds the shown waits to a batch when they changed and the batch does not set them itself. */
  #withWaits(patch: RunPatch | undefined, at: number): RunPatch | undefined {
    if (!this.#waitsChanged || patch?.waits !== undefined) {
      if (patch?.waits !== undefined) this.#waitsChanged = false;
      return patch;
    }
    this.#waitsChanged = false;
    return { updatedAt: at, waits: this.options.shownWaits(), ...patch };
  }
}

/** How a run ends when its journal is full. */
export function journalLimitError(limit: number): RunError {
  return runError(
    "limit",
    `The run's journal reached its limit of ${limit} entries. Split the work into several runs, or make fewer calls and log fewer lines.`,
  );
}
