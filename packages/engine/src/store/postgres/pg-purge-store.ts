/**
 * The purge sub-store on PostgreSQL (`purge-store.ts`): a batch is one write of the store's group
 * commit. Its candidates are read, then deleted from `runs` under the condition they were read
 * with (`STILL_PURGEABLE`: under READ COMMITTED the DELETE evaluates it again on a row another
 * transaction changed meanwhile, so a session taken up since stays), and only the runs that
 * delete removed lose their other rows. Rows another transaction holds are waited for, never
 * long: a run's writes are single commits.
 */
import type { PurgeCounts, PurgeSelection, PurgeStore } from "../purge-store.js";
import { isSessionRecord, purgeCandidatesSql, purgeCountSql, RUN_KEYED_TABLES, runScopeKey, STILL_PURGEABLE } from "../purge-sql.js";
import type { PgAccess } from "./pg-access.js";

/** How PostgreSQL names parameter n, typed where the statement alone does not tell. */
const param = (n: 1 | 2 | 3): string => (n === 2 ? "$2::text" : `$${n}::bigint`);

export class PgPurgeStore implements PurgeStore {
  readonly #access: PgAccess;

  constructor(access: PgAccess) {
    this.#access = access;
  }

  async countPurgeable(selection: PurgeSelection): Promise<PurgeCounts> {
    const [row] = await this.#access.read<{ runs: string; sessions: string; entries: string }>(purgeCountSql(param), [
      selection.endedBefore,
      selection.namespace ?? null,
    ]);
    return { runs: Number(row?.runs ?? 0), sessions: Number(row?.sessions ?? 0), journalEntries: Number(row?.entries ?? 0) };
  }

  purgeBatch(selection: PurgeSelection, limit: number): Promise<PurgeCounts> {
    return this.#access.write(async (tx) => {
      const candidates = await tx.query<{ id: string }>(purgeCandidatesSql(param), [selection.endedBefore, selection.namespace ?? null, limit]);
      if (candidates.rows.length === 0) return { runs: 0, sessions: 0, journalEntries: 0 };
      const deleted = await tx.query<{ id: string; journal_length: number }>(
        `DELETE FROM runs WHERE id = ANY($1::text[]) AND ${STILL_PURGEABLE} RETURNING id, journal_length`,
        [candidates.rows.map((row) => row.id)],
      );
      const ids = deleted.rows.map((row) => row.id);
      for (const [table, column] of RUN_KEYED_TABLES) await tx.query(`DELETE FROM ${table} WHERE ${column} = ANY($1::text[])`, [ids]);
      await tx.query("DELETE FROM credentials WHERE scope_key = ANY($1::text[])", [ids.map(runScopeKey)]);
      const sessions = ids.filter(isSessionRecord).length;
      return { runs: ids.length - sessions, sessions, journalEntries: deleted.rows.reduce((sum, row) => sum + Number(row.journal_length), 0) };
    });
  }
}
