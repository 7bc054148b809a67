/**
 * What a part of the PostgreSQL store (or a part sharing its database: the server) gets from
 * it: a write in the store's group commit, a read on its pool. Both retry a lost connection
 * (see `pg-group-commit.ts`, `pg-retry.ts`) and reject once the store is closed.
 */
export interface PgAccess {
  /** Runs `write` in the store's next batch (one transaction shared with the batch's other writes; undone alone if it throws); resolves with its value once committed. */
  readonly write: <T>(write: (tx: PgTransaction) => Promise<T>) => Promise<T>;
  /** Runs one query on the pool, outside any write: committed data only. */
  readonly read: <R extends object>(text: string, values?: readonly unknown[]) => Promise<R[]>;
}

/**
 * A write's connection as a part outside the store sees it (node-postgres' client, without its
 * types): statements with `$1…` parameters, inside the write's transaction. Never BEGIN, COMMIT
 * or ROLLBACK on it: the group commit does.
 */
export interface PgTransaction {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ readonly rows: R[]; readonly rowCount: number | null }>;
}
