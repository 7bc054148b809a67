/**
 * The erasure sub-store on PostgreSQL (`erase-store.ts`): a batch is one write of the store's
 * group commit. Its candidates are deleted from `runs` under the condition they were read with
 * (`ERASABLE`: under READ COMMITTED the DELETE evaluates it again on a row another transaction
 * changed meanwhile, so a session taken up since stays), and only the runs that delete removed
 * lose their other rows. `compact` answers false: dead tuples leave the heap at PostgreSQL's
 * VACUUM and its WAL segments are recycled by the server (`docs/design/retention.md`).
 */
import {
  ERASABLE,
  eraseCountSql,
  countsFromRow,
  namespaceCredentialsWhere,
  namespaceScopeSuffix,
  rateLimitPrefix,
  runKeyedDeletes,
  type EraseCountRow,
} from "../erase-sql.js";
import { NO_ERASURE, type ActiveRun, type EraseCounts, type EraseStore } from "../erase-store.js";
import { isSessionRecord } from "../purge-sql.js";
import type { PgAccess } from "./pg-access.js";

const ids = "(SELECT unnest($1::text[]))";

export class PgEraseStore implements EraseStore {
  readonly #access: PgAccess;

  constructor(access: PgAccess) {
    this.#access = access;
  }

  async countErasable(namespace: string): Promise<EraseCounts> {
    const [row] = await this.#access.read<EraseCountRow>(
      eraseCountSql((n) => `$${n}::text`, `'["run","' || id || '"]'`),
      [namespace, namespaceScopeSuffix(namespace), rateLimitPrefix(namespace)],
    );
    return countsFromRow(row);
  }

  async activeRuns(namespace: string, limit: number): Promise<readonly ActiveRun[]> {
    const rows = await this.#access.read<{ id: string; status: string; owner: string | null }>(
      `SELECT id, status, owner FROM runs WHERE namespace = $1 AND NOT ${ERASABLE} ORDER BY created_at LIMIT $2`,
      [namespace, limit],
    );
    return rows.map((row) => ({ id: row.id, status: row.status, ...(row.owner === null ? {} : { owner: row.owner }) }));
  }

  eraseRunsBatch(namespace: string, limit: number): Promise<EraseCounts> {
    return this.#access.write(async (tx) => {
      const candidates = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE namespace = $1 AND ${ERASABLE} LIMIT $2`, [namespace, limit]);
      if (candidates.rows.length === 0) return NO_ERASURE;
      const deleted = await tx.query<{ id: string }>(`DELETE FROM runs WHERE id = ANY($1::text[]) AND namespace = $2 AND ${ERASABLE} RETURNING id`, [
        candidates.rows.map((row) => row.id),
        namespace,
      ]);
      const removed = deleted.rows.map((row) => row.id);
      const counts: Record<string, number> = { ...NO_ERASURE };
      for (const [kind, sql] of runKeyedDeletes(ids)) counts[kind] = (counts[kind] ?? 0) + ((await tx.query(sql, [removed])).rowCount ?? 0);
      counts.credentials =
        (await tx.query(`DELETE FROM credentials WHERE scope_key IN (SELECT '["run","' || id || '"]' FROM unnest($1::text[]) AS id)`, [removed])).rowCount ?? 0;
      const sessions = removed.filter(isSessionRecord).length;
      return { ...(counts as unknown as EraseCounts), runs: removed.length - sessions, sessions };
    });
  }

  eraseRestBatch(namespace: string, limit: number): Promise<EraseCounts> {
    return this.#access.write(async (tx) => {
      const credentials =
        (await tx.query(`DELETE FROM credentials WHERE ${namespaceCredentialsWhere("$1::text")}`, [namespaceScopeSuffix(namespace)])).rowCount ?? 0;
      const rateLimitCalls =
        (
          await tx.query(
            "DELETE FROM rate_limit_calls WHERE ord IN (SELECT ord FROM rate_limit_calls WHERE substr(key, 1, length($1::text)) = $1::text LIMIT $2)",
            [rateLimitPrefix(namespace), limit],
          )
        ).rowCount ?? 0;
      const hostTasks =
        (await tx.query("DELETE FROM host_tasks WHERE id IN (SELECT id FROM host_tasks WHERE namespace = $1 LIMIT $2)", [namespace, limit])).rowCount ?? 0;
      const schedules = (await tx.query<{ id: string }>("SELECT id FROM schedules WHERE namespace = $1 LIMIT $2", [namespace, limit])).rows.map(
        (row) => row.id,
      );
      await tx.query("DELETE FROM schedule_fires WHERE schedule_id = ANY($1::text[])", [schedules]);
      const deletedSchedules = (await tx.query("DELETE FROM schedules WHERE id = ANY($1::text[])", [schedules])).rowCount ?? 0;
      return { ...NO_ERASURE, credentials, rateLimitCalls, hostTasks, schedules: deletedSchedules };
    });
  }

  compact(): Promise<boolean> {
    return Promise.resolve(false);
  }
}
