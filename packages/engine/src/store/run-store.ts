import type { JournalEntry, JsonValue, RunError, RunEvent, RunStatus, RunWait } from "@tapedeck/protocol";
import type { StagedHostTask } from "./host-task-store.js";

/**
 * The runs sub-store: runs and their journals, the engine's record of what each run did.
 * Contract: `contracts/run-store-contract.ts`.
 *
 * Durability: when a promise returned by `append` or `createRun` resolves, what it wrote
 * survives a crash of the process (and, with durability `full`, of the machine). Appends of
 * concurrent runs share commits (group commit).
 */
export interface RunStore {
  /**
   * Creates a run and writes its first journal entries, atomically. Fails if the id exists.
   * With an `idempotencyKey` a run of the same namespace already has, nothing is written and
   * that run's id is returned (`duplicate`): of two concurrent creations with one key, one wins.
   */
  createRun(run: NewRun, entries: readonly JournalEntry[]): Promise<CreateRunResult>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** The run created with this idempotency key in this namespace (none: the runs without one), if any. */
  getRunByIdempotencyKey(key: string, namespace?: string): Promise<RunRecord | undefined>;
  listRuns(query?: RunQuery): Promise<RunRecord[]>;
  /** How many runs are in each status (every status present, 0 when none), of every namespace: for metrics (`/metrics`). */
  countRuns(): Promise<RunCounts>;

  /**
   * Appends entries to a run's journal and applies `patch` to the run, in one commit.
   * `entries[i].index` must continue the journal exactly (else `StoreConflictError`, and
   * nothing of this batch is written): two writers of one run cannot both succeed.
   * With `epoch` (the lease epoch the writer won, `LeaseStore.claimRun`), the run's lease must
   * still have it, checked in the same conditional write, else `LeaseLostError` (checked before
   * the length: a writer that lost the run is told so) and nothing is written.
   */
  append(runId: string, entries: readonly JournalEntry[], patch?: RunPatch, epoch?: number): Promise<void>;

  /** Entries with `index >= from`, in order, at most `limit`. */
  readJournal(runId: string, from?: number, limit?: number): Promise<JournalEntry[]>;

  /** The earliest `wakeAt` of a waiting run (later than `after`; of runs `owner` holds), if any. */
  nextWakeAt(options?: { readonly after?: number; readonly owner?: string }): Promise<number | undefined>;

  /**
   * Run events appends recorded (`RunPatch.events`) that their reader has not removed yet,
   * oldest first, at most `limit`. The reader (the server's webhook outbox) removes each in the
   * commit that saves what it made of it, through the implementation's own handle (see
   * `docs/design/store.md`): the engine only writes them.
   */
  recordedEvents(limit: number): Promise<RecordedRunEvent[]>;

  /**
   * Runs created or changed (by `createRun`, or an `append` with a patch) after the change
   * `after` names, in the order those writes became durable, each at its state now, at most
   * `limit`, with the cursor to read on from. A run changed again later comes again later; one
   * changed twice before a read comes once. No write is passed over: a commit not durable yet
   * cannot land before a cursor given out (the order is the durable one, on every node).
   * Undefined when `after` is not a cursor of this store (one it gave out, or `changesCursor`).
   */
  changedRuns(after: string, limit: number): Promise<ChangedRun[] | undefined>;

  /** The cursor of now: `changedRuns` after it gives only the changes durable from now on (and perhaps a few just before). */
  changesCursor(): Promise<string>;
}

/** The number of runs in each status. */
export type RunCounts = Readonly<Record<RunStatus, number>>;

/** Runs by status from `status, n` rows: every status present, rows of other values (a damaged row) left out. */
export function runCounts(rows: readonly { readonly status: string; readonly n: number | string }[]): RunCounts {
  const counts: Record<RunStatus, number> = { queued: 0, running: 0, waiting: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const row of rows) if (Object.hasOwn(counts, row.status)) counts[row.status as RunStatus] += Number(row.n);
  return counts;
}

/** A run `changedRuns` gives, with the cursor of its change (opaque; resume after it). */
export interface ChangedRun {
  readonly cursor: string;
  readonly run: RunRecord;
}

/** What a run is made of when it starts. */
export interface NewRun {
  readonly id: string;
  readonly toolsetId: string;
  /** The model's TypeScript, as written. */
  readonly source: string;
  /** The JavaScript the sandbox runs, pinned with the run so replays never depend on a compiler upgrade. */
  readonly js: string;
  /** The source map from `js` back to `source`. */
  readonly sourceMap: string;
  readonly input: JsonValue;
  readonly status: RunStatus;
  readonly createdAt: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  /** The run this one was forked from. */
  readonly parentId?: string;
  /** For a workflow's child run: the run that started it, and the seq of its `workflows.<name>.start` call (its end wakes that run). */
  readonly caller?: RunCaller;
  /** Names the start: a second run with the same key in the same namespace is never created. */
  readonly idempotencyKey?: string;
  /** When the run is cancelled if it has not ended by then (its TTL), ms since the epoch. */
  readonly expiresAt?: number;
}

/** The run (and its call) that started a workflow's child run. */
export interface RunCaller {
  readonly runId: string;
  readonly seq: number;
}

/** What `createRun` did. */
export type CreateRunResult =
  /** The run and its entries were written. */
  | { readonly kind: "created" }
  /** A run of the namespace has the idempotency key: nothing was written; `runId` is that run's. */
  | { readonly kind: "duplicate"; readonly runId: string };

export interface RunRecord extends NewRun {
  readonly updatedAt: number;
  /** Number of journal entries. */
  readonly journalLength: number;
  readonly output?: JsonValue;
  readonly error?: RunError;
  /** What the run waits for: everything while `waiting`; calls waiting for a decision at any time. */
  readonly waits?: readonly RunWait[];
  /** While `waiting`: when its earliest timer is due. */
  readonly wakeAt?: number;
  /** The engine that holds the run's lease, and until when (see `lease-store.ts`). */
  readonly owner?: { readonly id: string; readonly until: number };
  /**
   * Set only in a list asked for with `RunQuery.includeDamaged`: the run's row cannot be read
   * (why). Then only `id`, `toolsetId`, the times and `journalLength` are the row's; the rest
   * are placeholders (`status` is the row's if it is a status, else `failed`).
   */
  readonly damaged?: string;
  /**
   * Executions of the run that ended in a fault of the host since it last made progress (absent:
   * none), and what the last one was: see `runs/host-faults.ts`.
   */
  readonly hostFaults?: {
    readonly count: number;
    readonly last: string;
    /** How many of them were takeovers after the holding process died (`LeaseStore.forgiveCrashes`). */
    readonly crashes: number;
  };
}

/**
 * Changes to a run written in the same commit as journal entries. A field left out is kept. A
 * run that ends loses its lease in that commit, and gives up its host tasks (see
 * `host-task-store.ts`): a queued one is deleted, a claimed one withdrawn, so that no worker
 * takes a call of a run that ended, whichever process ended it.
 */
export interface RunPatch {
  readonly status?: RunStatus;
  readonly output?: JsonValue;
  readonly error?: RunError;
  readonly updatedAt: number;
  /** Replaces `waits`; `null` clears it. */
  readonly waits?: readonly RunWait[] | null;
  /** Replaces `wakeAt`; `null` clears it. */
  readonly wakeAt?: number | null;
  /** Signals taken by `signal()` calls (by seq) whose outcomes are in these entries. Each must still be pending, else `StoreConflictError` (see `signal-store.ts`). */
  readonly consumeSignals?: readonly { readonly id: number; readonly seq: number }[];
  /** Events this commit makes happen, recorded for `recordedEvents` (see `RunEvent`). */
  readonly events?: readonly RunEvent[];
  /**
   * Another run to wake in this commit, if it is `waiting`: its `wakeAt` becomes `updatedAt`
   * unless it is earlier. A child run's end wakes its caller this way, so that a caller parked on
   * it wakes even if the process dies before telling it.
   */
  readonly wakeRun?: string;
  /** The run made progress in this commit: its host faults are forgotten (`RunRecord.hostFaults`). */
  readonly clearHostFaults?: boolean;
  /**
   * Host tasks queued in this commit: the first attempts of the host tool calls these entries
   * schedule, so that a task exists exactly when its `call.scheduled` does (no commit of its own),
   * claimed already when `claim` says a poll of the writing process takes it. Published
   * (`HOST_TASKS_TOPIC`, for the queued ones) once committed. See `host-task-store.ts`.
   */
  readonly hostTasks?: readonly StagedHostTask[];
}

export interface RunQuery {
  readonly status?: readonly RunStatus[];
  /** Every label given must match. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  /** Only `waiting` runs whose `wakeAt` is at or before this time (oldest timer first). */
  readonly wakeBy?: number;
  /** Only runs with a call waiting for a decision. */
  readonly needsDecision?: boolean;
  /** Only runs whose lease this engine holds. */
  readonly owner?: string;
  /** Only runs held by an owner whose lease ended before this time (it stopped renewing, or gave it up at a clean stop): anyone's to take over. */
  readonly leaseLapsedBy?: number;
  /** Only runs no process holds that were released (after a fault of their host, `LeaseStore.releaseRuns`) before this wall-clock time. */
  readonly releasedBefore?: number;
  /** Only runs that have not ended whose `expiresAt` is at or before this time (soonest first). */
  readonly expiredBy?: number;
  /** Newest first; at most this many. Default 100. */
  readonly limit?: number;
  /**
   * A run whose row cannot be read (a column that is not what the store wrote: a damaged or
   * hand-edited database) is listed with `damaged` set instead of failing the whole list: for
   * lists shown to people. Default false: a run that cannot be read is an error.
   */
  readonly includeDamaged?: boolean;
}

/** A run event as the store recorded it (`RunPatch.events`). */
export interface RecordedRunEvent {
  /** Increasing in the order the events were committed. */
  readonly id: number;
  readonly event: RunEvent;
  /** When it happened. */
  readonly at: number;
}
