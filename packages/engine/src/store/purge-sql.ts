/**
 * The SQL both stores' purges share (`sqlite-purge-store.ts`, `postgres/pg-purge-store.ts`):
 * the tables and columns are the same in SQLite and PostgreSQL, only the parameters are spelled
 * differently, so each store passes how it names parameter `n`.
 *
 * The candidates are read in two branches, each led by a partial index on `updated_at` (SQLite
 * migration 25, PostgreSQL migration 9) — ended runs, and direct sessions — each ordered and
 * limited on its own: a batch reads at most `limit` rows of each, however large the backlog.
 */

const ENDED = "('completed', 'failed', 'cancelled')";

/** Of the `runs` row aliased `r`: no workflow relative of it is alive (see `purge-store.ts`). */
const NO_LIVE_RELATIVE = `NOT EXISTS (SELECT 1 FROM runs c WHERE c.caller_run_id = r.id AND c.status NOT IN ${ENDED})
  AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.id = r.caller_run_id AND p.status NOT IN ${ENDED})`;

/** Of the `runs` row aliased `r`, besides `updated_at`: it is a session no engine holds live and no call of which waits for a decision. */
const IDLE_SESSION = "substr(r.id, 1, 4) = 'ses_' AND r.status = 'waiting' AND r.owner IS NULL AND r.decisions = 0";

/**
 * Parameters: 1 ended before (ms), 2 the namespace (NULL: any; a statement `byNamespace` needs
 * one), 3 the limit. Rows: id, journal_length. `indexed` names the index a branch must read in the
 * store's dialect (SQLite's `INDEXED BY`: its planner, without statistics, would rather read every
 * ended run by status and sort them): one namespace's runs by the namespace index, since an
 * erasure takes them all whatever their age.
 */
export function purgeCandidatesSql(param: (n: 1 | 2 | 3) => string, indexed: (index: string) => string = () => "", byNamespace = false): string {
  const namespace = byNamespace ? `r.namespace = ${param(2)}` : `(${param(2)} IS NULL OR r.namespace = ${param(2)})`;
  const branch = (which: string, index: string) =>
    `SELECT * FROM (SELECT r.id, r.journal_length, r.updated_at FROM runs r ${indexed(byNamespace ? "runs_by_namespace" : index)}
       WHERE ${which} AND r.updated_at < ${param(1)} AND ${namespace} AND ${NO_LIVE_RELATIVE}
       ORDER BY r.updated_at LIMIT ${param(3)}) AS b`;
  return `SELECT id, journal_length FROM (${branch(`r.status IN ${ENDED}`, "runs_ended")} UNION ALL ${branch(IDLE_SESSION, "runs_sessions")}) AS u
    ORDER BY updated_at LIMIT ${param(3)}`;
}

/** Parameters: 1 ended before, 2 the namespace or NULL. One row: runs, sessions, entries (the dry run). */
export function purgeCountSql(param: (n: 1 | 2) => string): string {
  const namespace = `(${param(2)} IS NULL OR r.namespace = ${param(2)})`;
  return `SELECT
      count(*) FILTER (WHERE substr(id, 1, 4) <> 'ses_') AS runs,
      count(*) FILTER (WHERE substr(id, 1, 4) = 'ses_') AS sessions,
      coalesce(sum(journal_length), 0) AS entries
    FROM runs r
    WHERE ((r.status IN ${ENDED}) OR (${IDLE_SESSION})) AND r.updated_at < ${param(1)} AND ${namespace} AND ${NO_LIVE_RELATIVE}`;
}

/** The condition a candidate must still meet when it is deleted (a session may have been taken up since it was read). */
export const STILL_PURGEABLE = `(status IN ${ENDED} OR (owner IS NULL AND decisions = 0 AND status = 'waiting'))`;

/** The tables keyed by a run id (column), deleted with the run: every row the run left. */
export const RUN_KEYED_TABLES: readonly (readonly [table: string, column: string])[] = [
  ["journal", "run_id"],
  ["signals", "run_id"],
  ["webhooks", "run_id"],
  ["run_requests", "run_id"],
  ["run_events", "run_id"],
  ["host_tasks", "run_id"],
  // A session's spilled results and sealed call arguments, keyed by its record's id.
  ["direct_blobs", "session"],
];

/** The credentials scope key of a run's own credentials (as `secrets/credential.ts` writes it). */
export function runScopeKey(runId: string): string {
  return JSON.stringify(["run", runId]);
}

/** Whether a record id is a direct session's. */
export function isSessionRecord(id: string): boolean {
  return id.startsWith("ses_");
}
