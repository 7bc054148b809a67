/**
 * The purge sub-store on SQLite (`purge-store.ts`): a batch reads its candidates and deletes
 * them, with every row keyed by them, inside one write of the store's group commit — one
 * transaction, so nothing can take a candidate up between the read and the delete.
 */
import type Database from "better-sqlite3";
import type { PurgeCounts, PurgeSelection, PurgeStore } from "./purge-store.js";
import { isSessionRecord, purgeCandidatesSql, purgeCountSql, RUN_KEYED_TABLES, runScopeKey } from "./purge-sql.js";
import type { SqliteAccess } from "./sqlite-handle.js";

interface Params {
  readonly p1: number;
  readonly p2: string | null;
  readonly p3?: number;
}

export class SqlitePurgeStore implements PurgeStore {
  readonly #access: SqliteAccess;
  readonly #sql;

  constructor(db: Database.Database, access: SqliteAccess) {
    this.#access = access;
    const ids = "(SELECT value FROM json_each(?))";
    this.#sql = {
      candidates: db.prepare<[Params], { id: string; journal_length: number }>(purgeCandidatesSql(named, indexedBy)),
      namespaceCandidates: db.prepare<[Params], { id: string; journal_length: number }>(purgeCandidatesSql(named, indexedBy, true)),
      count: db.prepare<[Params], { runs: number; sessions: number; entries: number }>(purgeCountSql((n) => `@p${n}`)),
      keyed: RUN_KEYED_TABLES.map(([table, column]) => db.prepare<[string]>(`DELETE FROM ${table} WHERE ${column} IN ${ids}`)),
      credentials: db.prepare<[string]>(`DELETE FROM credentials WHERE scope_key IN ${ids}`),
      runs: db.prepare<[string]>(`DELETE FROM runs WHERE id IN ${ids}`),
    };
  }

  countPurgeable(selection: PurgeSelection): Promise<PurgeCounts> {
    return this.#access.read(() => {
      const row = this.#sql.count.get(params(selection));
      return { runs: row?.runs ?? 0, sessions: row?.sessions ?? 0, journalEntries: row?.entries ?? 0 };
    });
  }

  purgeBatch(selection: PurgeSelection, limit: number): Promise<PurgeCounts> {
    let counts: PurgeCounts = { runs: 0, sessions: 0, journalEntries: 0 };
    return this.#access
      .write(() => {
        const candidates = selection.namespace === undefined ? this.#sql.candidates : this.#sql.namespaceCandidates;
        const rows = candidates.all({ ...params(selection), p3: limit });
        if (rows.length === 0) return;
        const ids = JSON.stringify(rows.map((row) => row.id));
        for (const statement of this.#sql.keyed) statement.run(ids);
        this.#sql.credentials.run(JSON.stringify(rows.map((row) => runScopeKey(row.id))));
        this.#sql.runs.run(ids);
        const sessions = rows.filter((row) => isSessionRecord(row.id)).length;
        counts = { runs: rows.length - sessions, sessions, journalEntries: rows.reduce((sum, row) => sum + row.journal_length, 0) };
      })
      .then(() => counts);
  }
}

const named = (n: number): string => `@p${n}`;
const indexedBy = (index: string): string => `INDEXED BY ${index}`;

function params(selection: PurgeSelection): Params {
  return { p1: selection.endedBefore, p2: selection.namespace ?? null };
}
