/**
 * The erasure sub-store on SQLite (`erase-store.ts`): a batch reads its candidates and deletes
 * them, with every row keyed by them, inside one write of the store's group commit — one
 * transaction, so nothing can take a candidate up between the read and the delete. `compact`
 * rebuilds the database file (VACUUM) and truncates its WAL, so that the deleted rows' bytes
 * are in none of the data folder's files (a deleted row otherwise stays in free pages, in free
 * space of pages still used, and in WAL frames, until overwritten).
 */
import type Database from "better-sqlite3";
import {
  ERASABLE,
  eraseCountSql,
  countsFromRow,
  namespaceCredentialsWhere,
  namespaceScopeSuffix,
  rateLimitPrefix,
  runKeyedDeletes,
  type EraseCountRow,
} from "./erase-sql.js";
import { NO_ERASURE, type ActiveRun, type EraseCounts, type EraseStore } from "./erase-store.js";
import { isSessionRecord } from "./purge-sql.js";
import type { SqliteAccess } from "./sqlite-handle.js";

export class SqliteEraseStore implements EraseStore {
  readonly #db: Database.Database;
  readonly #access: SqliteAccess;
  readonly #sql;

  constructor(db: Database.Database, access: SqliteAccess) {
    this.#db = db;
    this.#access = access;
    const ids = "(SELECT value FROM json_each(?))";
    this.#sql = {
      count: db.prepare<[{ p1: string; p2: string; p3: string }], EraseCountRow>(eraseCountSql((n) => `@p${n}`, `'["run","' || id || '"]'`)),
      active: db.prepare<[string, number], { id: string; status: string; owner: string | null }>(
        `SELECT id, status, owner FROM runs INDEXED BY runs_by_namespace WHERE namespace = ? AND NOT ${ERASABLE} ORDER BY created_at LIMIT ?`,
      ),
      candidates: db.prepare<[string, number], { id: string }>(`SELECT id FROM runs INDEXED BY runs_by_namespace WHERE namespace = ? AND ${ERASABLE} LIMIT ?`),
      keyed: runKeyedDeletes(ids).map(([kind, sql]) => [kind, db.prepare<[string]>(sql)] as const),
      runCredentials: db.prepare<[string]>(`DELETE FROM credentials WHERE scope_key IN (SELECT '["run","' || value || '"]' FROM json_each(?))`),
      runs: db.prepare<[string]>(`DELETE FROM runs WHERE id IN ${ids}`),
      credentials: db.prepare<[{ p1: string }]>(`DELETE FROM credentials WHERE ${namespaceCredentialsWhere("@p1")}`),
      rateLimits: db.prepare<[{ p1: string; p2: number }]>(
        "DELETE FROM rate_limit_calls WHERE id IN (SELECT id FROM rate_limit_calls WHERE substr(key, 1, length(@p1)) = @p1 LIMIT @p2)",
      ),
      hostTasks: db.prepare<[string, number]>("DELETE FROM host_tasks WHERE id IN (SELECT id FROM host_tasks WHERE namespace = ? LIMIT ?)"),
      schedules: db.prepare<[string, number], { id: string }>("SELECT id FROM schedules WHERE namespace = ? LIMIT ?"),
      fires: db.prepare<[string]>(`DELETE FROM schedule_fires WHERE schedule_id IN ${ids}`),
      deleteSchedules: db.prepare<[string]>(`DELETE FROM schedules WHERE id IN ${ids}`),
    };
  }

  countErasable(namespace: string): Promise<EraseCounts> {
    return this.#access.read(() => countsFromRow(this.#sql.count.get({ p1: namespace, p2: namespaceScopeSuffix(namespace), p3: rateLimitPrefix(namespace) })));
  }

  activeRuns(namespace: string, limit: number): Promise<readonly ActiveRun[]> {
    return this.#access.read(() =>
      this.#sql.active.all(namespace, limit).map((row) => ({ id: row.id, status: row.status, ...(row.owner === null ? {} : { owner: row.owner }) })),
    );
  }

  eraseRunsBatch(namespace: string, limit: number): Promise<EraseCounts> {
    let counts = NO_ERASURE;
    return this.#access
      .write(() => {
        const rows = this.#sql.candidates.all(namespace, limit);
        if (rows.length === 0) return;
        const ids = JSON.stringify(rows.map((row) => row.id));
        const deleted: Record<string, number> = { ...NO_ERASURE };
        for (const [kind, statement] of this.#sql.keyed) deleted[kind] = (deleted[kind] ?? 0) + statement.run(ids).changes;
        deleted.credentials = this.#sql.runCredentials.run(ids).changes;
        this.#sql.runs.run(ids);
        const sessions = rows.filter((row) => isSessionRecord(row.id)).length;
        counts = { ...(deleted as unknown as EraseCounts), runs: rows.length - sessions, sessions };
      })
      .then(() => counts);
  }

  eraseRestBatch(namespace: string, limit: number): Promise<EraseCounts> {
    let counts = NO_ERASURE;
    return this.#access
      .write(() => {
        const credentials = this.#sql.credentials.run({ p1: namespaceScopeSuffix(namespace) }).changes;
        const rateLimitCalls = this.#sql.rateLimits.run({ p1: rateLimitPrefix(namespace), p2: limit }).changes;
        const hostTasks = this.#sql.hostTasks.run(namespace, limit).changes;
        const schedules = JSON.stringify(this.#sql.schedules.all(namespace, limit).map((row) => row.id));
        this.#sql.fires.run(schedules);
        counts = { ...NO_ERASURE, credentials, rateLimitCalls, hostTasks, schedules: this.#sql.deleteSchedules.run(schedules).changes };
      })
      .then(() => counts);
  }

  async compact(): Promise<boolean> {
    // An empty write waits for the group commit's queued writes: VACUUM needs no transaction open.
    await this.#access.write(() => {});
    return this.#access.read(() => compactDatabase(this.#db));
  }
}

/**
 * Rebuilds `db`'s file without its free pages and free space (VACUUM), then copies the WAL into it
 * and truncates the WAL to nothing; true when the checkpoint finished (false: a reader of another
 * connection held an older snapshot, so frames may be left until the next checkpoint).
 */
export function compactDatabase(db: Database.Database): boolean {
  try {
    db.exec("VACUUM");
  } catch {
    // A statement of this connection still reading (an iterator across an await), or the lock
    // held past the busy timeout: the rows are deleted all the same, and an erasure run again
    // (which finds nothing) compacts again.
    return false;
  }
  const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
  return result?.busy === 0;
}
