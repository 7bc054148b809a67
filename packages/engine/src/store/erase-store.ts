/**
 * The erasure sub-store: deletes everything the store keeps of one namespace (one end user) —
 * its runs and direct sessions with every row keyed by them, its namespace-scoped credentials,
 * its rate-limit windows, its host tasks and its schedules — in bounded batches, for
 * `Engine.eraseNamespace` (`docs/design/retention.md`, "Erasure of an end user").
 *
 * Invariants:
 * - A run of the namespace that has not ended (queued, running, waiting, parked), and a direct
 *   session a process holds live or one of whose calls waits for a decision, is never deleted:
 *   the engine cancels or refuses first (`activeRuns` names them). A batch deletes a candidate
 *   under the condition it was read with, so one taken up meanwhile stays.
 * - One batch is one commit of at most `limit` runs (or `limit` rows of one other kind): an
 *   erasure never holds a long lock, and a batch deleted a run and all its rows or none of them.
 * - Nothing of another namespace is read or deleted: every statement is keyed by the namespace
 *   (or by ids of its runs).
 * - `compact` makes what was deleted unreadable from the store's files where the store can
 *   (SQLite: VACUUM, then a TRUNCATE checkpoint of its WAL); PostgreSQL's heap and WAL are the
 *   server's to recycle (its VACUUM, WAL recycling), so it answers false there.
 */

/** What an erasure deleted (or, for a dry run, would delete), by kind. */
export interface EraseCounts {
  /** Runs (workflows and scripts) deleted, sessions not included. */
  readonly runs: number;
  /** Direct tool sessions deleted. */
  readonly sessions: number;
  readonly journalEntries: number;
  /** Direct sessions' spilled results. */
  readonly blobs: number;
  /** Direct sessions' sealed arguments of sensitive calls. */
  readonly sealedArguments: number;
  /** Signals sent to its runs, and run-bound webhook URLs. */
  readonly signals: number;
  /** Requests other processes left for its runs (signals, decisions, cancels). */
  readonly requests: number;
  /** Run events recorded for the webhook outbox, not yet fanned out. */
  readonly events: number;
  readonly hostTasks: number;
  /** Its namespace-scoped credentials and its runs' own credentials. */
  readonly credentials: number;
  /** Calls counted in its tools' rate-limit windows. */
  readonly rateLimitCalls: number;
  /** Its schedules (their fires go with them). */
  readonly schedules: number;
}

export const NO_ERASURE: EraseCounts = {
  runs: 0,
  sessions: 0,
  journalEntries: 0,
  blobs: 0,
  sealedArguments: 0,
  signals: 0,
  requests: 0,
  events: 0,
  hostTasks: 0,
  credentials: 0,
  rateLimitCalls: 0,
  schedules: 0,
};

/** `a` and `b` added up, kind by kind. */
export function addEraseCounts(a: EraseCounts, b: Partial<EraseCounts>): EraseCounts {
  const sum: Record<string, number> = { ...a };
  for (const [kind, n] of Object.entries(b)) sum[kind] = (sum[kind] ?? 0) + (n ?? 0);
  return sum as unknown as EraseCounts;
}

/** A run of the namespace an erasure must not delete now. */
export interface ActiveRun {
  readonly id: string;
  readonly status: string;
  /** The process holding it, if one does. */
  readonly owner?: string;
}

export interface EraseStore {
  /** What erasing `namespace` whole would delete now, every run of it included (the dry run). */
  countErasable(namespace: string): Promise<EraseCounts>;
  /** Its runs that have not ended and its sessions held live or waiting for a decision, at most `limit`. */
  activeRuns(namespace: string, limit: number): Promise<readonly ActiveRun[]>;
  /**
   * Deletes at most `limit` of its ended runs and idle sessions with every row keyed by them, in
   * one commit. Nothing deleted: none is left (but for active ones).
   */
  eraseRunsBatch(namespace: string, limit: number): Promise<EraseCounts>;
  /**
   * Deletes at most `limit` of its rows not keyed by a run (namespace credentials, rate-limit
   * calls, host tasks left, schedules with their fires), in one commit. Nothing deleted: none is left.
   */
  eraseRestBatch(namespace: string, limit: number): Promise<EraseCounts>;
  /** Makes deleted rows' bytes gone from the store's files; true when it could (see the invariants). */
  compact(): Promise<boolean>;
}
