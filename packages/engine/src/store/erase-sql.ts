/**
 * The SQL both stores' erasures share (`sqlite-erase-store.ts`, `postgres/pg-erase-store.ts`):
 * the tables and columns are the same in SQLite and PostgreSQL; only parameters, and how a list
 * of ids is passed, are spelled differently, so each store passes its spelling.
 */
import type { EraseCounts } from "./erase-store.js";

const ENDED = "('completed', 'failed', 'cancelled')";

/**
 * Of a `runs` row: an erasure may delete it now — it ended, or it is a direct session no
 * process holds live and no call of which waits for a decision (`erase-store.ts`).
 */
export const ERASABLE = `(status IN ${ENDED} OR (substr(id, 1, 4) = 'ses_' AND status = 'waiting' AND owner IS NULL AND decisions = 0))`;

/** The handle prefix of a session's sealed call arguments (`direct/sealed-call-args.ts`), told apart from its spilled results. */
const SEALED = "substr(handle, 1, 12) = 'sealed_args_'";

/**
 * The rows keyed by a run id, deleted with the run: table, column, an extra condition, and the
 * kind they are counted as. `ids` is the store's expression of the batch's id list.
 */
export function runKeyedDeletes(ids: string): readonly (readonly [kind: keyof EraseCounts, sql: string])[] {
  return [
    ["journalEntries", `DELETE FROM journal WHERE run_id IN ${ids}`],
    ["signals", `DELETE FROM signals WHERE run_id IN ${ids}`],
    ["signals", `DELETE FROM webhooks WHERE run_id IN ${ids}`],
    ["requests", `DELETE FROM run_requests WHERE run_id IN ${ids}`],
    ["events", `DELETE FROM run_events WHERE run_id IN ${ids}`],
    ["hostTasks", `DELETE FROM host_tasks WHERE run_id IN ${ids}`],
    ["sealedArguments", `DELETE FROM direct_blobs WHERE session IN ${ids} AND ${SEALED}`],
    ["blobs", `DELETE FROM direct_blobs WHERE session IN ${ids}`],
  ];
}

/** The credentials scope key prefix of a namespace's credentials, and the suffix that names `namespace` (`secrets/credential.ts`: `["namespace", toolset, ns]`). */
export function namespaceScopeSuffix(namespace: string): string {
  return `,${JSON.stringify(namespace)}]`;
}

/** The rate-limit key prefix of `namespace`'s windows (`library/rate-limit/rate-limiter.ts`: `[ns, tool]`). */
export function rateLimitPrefix(namespace: string): string {
  return `[${JSON.stringify(namespace)},`;
}

/** Parameter 1: `namespaceScopeSuffix`. Its namespace-scoped credentials (few: one per toolset and name). */
export function namespaceCredentialsWhere(p1: string): string {
  return `substr(scope_key, 1, 13) = '["namespace",' AND substr(scope_key, length(scope_key) - length(${p1}) + 1) = ${p1}`;
}

/**
 * The dry run: one row counting every kind. Parameters: 1 the namespace, 2 `namespaceScopeSuffix`,
 * 3 `rateLimitPrefix`; `runScopeKeys` the store's expression of the run scope keys of its runs.
 */
export function eraseCountSql(param: (n: 1 | 2 | 3) => string, runScopeKey: string): string {
  const runs = `(SELECT id FROM runs WHERE namespace = ${param(1)})`;
  return `SELECT
      (SELECT count(*) FROM runs WHERE namespace = ${param(1)} AND substr(id, 1, 4) <> 'ses_') AS runs,
      (SELECT count(*) FROM runs WHERE namespace = ${param(1)} AND substr(id, 1, 4) = 'ses_') AS sessions,
      (SELECT count(*) FROM journal WHERE run_id IN ${runs}) AS journal_entries,
      (SELECT count(*) FROM direct_blobs WHERE session IN ${runs} AND NOT ${SEALED}) AS blobs,
      (SELECT count(*) FROM direct_blobs WHERE session IN ${runs} AND ${SEALED}) AS sealed_arguments,
      (SELECT count(*) FROM signals WHERE run_id IN ${runs}) + (SELECT count(*) FROM webhooks WHERE run_id IN ${runs}) AS signals,
      (SELECT count(*) FROM run_requests WHERE run_id IN ${runs}) AS requests,
      (SELECT count(*) FROM run_events WHERE run_id IN ${runs}) AS events,
      (SELECT count(*) FROM host_tasks WHERE run_id IN ${runs} OR namespace = ${param(1)}) AS host_tasks,
      (SELECT count(*) FROM credentials WHERE ${namespaceCredentialsWhere(param(2))}
        OR scope_key IN (SELECT ${runScopeKey} FROM runs WHERE namespace = ${param(1)})) AS credentials,
      (SELECT count(*) FROM rate_limit_calls WHERE substr(key, 1, length(${param(3)})) = ${param(3)}) AS rate_limit_calls,
      (SELECT count(*) FROM schedules WHERE namespace = ${param(1)}) AS schedules`;
}

/** A row of `eraseCountSql` (counts may come as text from PostgreSQL). */
export interface EraseCountRow {
  readonly runs: number | string;
  readonly sessions: number | string;
  readonly journal_entries: number | string;
  readonly blobs: number | string;
  readonly sealed_arguments: number | string;
  readonly signals: number | string;
  readonly requests: number | string;
  readonly events: number | string;
  readonly host_tasks: number | string;
  readonly credentials: number | string;
  readonly rate_limit_calls: number | string;
  readonly schedules: number | string;
}

export function countsFromRow(row: EraseCountRow | undefined): EraseCounts {
  const n = (value: number | string | undefined): number => Number(value ?? 0);
  return {
    runs: n(row?.runs),
    sessions: n(row?.sessions),
    journalEntries: n(row?.journal_entries),
    blobs: n(row?.blobs),
    sealedArguments: n(row?.sealed_arguments),
    signals: n(row?.signals),
    requests: n(row?.requests),
    events: n(row?.events),
    hostTasks: n(row?.host_tasks),
    credentials: n(row?.credentials),
    rateLimitCalls: n(row?.rate_limit_calls),
    schedules: n(row?.schedules),
  };
}
