/**
 * The purge sub-store: deletes ended runs, and direct sessions nobody used since a time, whole —
 * each with every row keyed by it (journal, signals, webhook bindings, requests, recorded events,
 * host tasks, spilled blobs and sealed arguments, run-scoped credentials) — in bounded batches,
 * for retention and on demand (`Engine.purgeRuns`, `docs/design/retention.md`).
 * Contract: `contracts/purge-store-contract.ts`.
 *
 * Invariants:
 * - A run that has not ended (queued, running, waiting, parked) is never deleted; a direct
 *   session (a `ses_…` record, waiting for ever) only when no engine holds it live and no call
 *   of it waits for a decision.
 * - A workflow relation is never cut while one side is alive: a child whose caller has not ended
 *   stays (the caller reads its end), and so does a caller one of whose children has not ended
 *   (the child's end wakes it). Ended relatives go independently: a reference an ended run keeps
 *   to a purged one (`parentId`, a caller's child id) then answers as a missing run.
 * - One batch is one commit of at most `limit` runs: a sweep never holds a long lock, and a
 *   batch either deleted a run and all its rows or none of them.
 */

/** Which runs a purge takes. */
export interface PurgeSelection {
  /** Runs that ended before this time (ms since the epoch), sessions last used before it. */
  readonly endedBefore: number;
  /** Only runs (and sessions) of this namespace. */
  readonly namespace?: string;
}

/** What a purge deleted (or, for a dry run, would delete). */
export interface PurgeCounts {
  /** Runs deleted, sessions not included. */
  readonly runs: number;
  /** Direct sessions deleted. */
  readonly sessions: number;
  /** Journal entries of those runs and sessions. */
  readonly journalEntries: number;
}

export interface PurgeStore {
  /** What purging `selection` whole would delete now, counted without deleting (the dry run). */
  countPurgeable(selection: PurgeSelection): Promise<PurgeCounts>;
  /**
   * Deletes at most `limit` runs and sessions of `selection`, oldest end first, with every row
   * keyed by them, in one commit; resolves with what it deleted once committed. Fewer than
   * `limit` deleted: nothing of the selection was left.
   */
  purgeBatch(selection: PurgeSelection, limit: number): Promise<PurgeCounts>;
}

/** Counts of nothing. */
export const NO_PURGE: PurgeCounts = { runs: 0, sessions: 0, journalEntries: 0 };

/** `a` and `b` added up. */
export function addPurgeCounts(a: PurgeCounts, b: PurgeCounts): PurgeCounts {
  return { runs: a.runs + b.runs, sessions: a.sessions + b.sessions, journalEntries: a.journalEntries + b.journalEntries };
}
