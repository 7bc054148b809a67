/**
 * What a part of the PostgreSQL store (or a part sharing its database: the server) gets from
 * it: a write in the store's group commit, a read on its pool. Both retry a lost connection
 * (see `pg-group-commit.ts`, `pg-retry.ts`) and reject once the store is closed.
 */
import type pg from "pg";
import type { PgWrite } from "./pg-group-commit.js";

export interface PgAccess {
  /** Runs `write` in the store's next batch (one transaction; its own SAVEPOINT when it shares the batch); resolves with its value once committed. */
  readonly write: <T>(write: PgWrite<T>) => Promise<T>;
  /** Runs one query on the pool, outside any write: committed data only. */
  readonly read: <R extends pg.QueryResultRow>(text: string, values?: readonly unknown[]) => Promise<R[]>;
}

export type { PgWrite } from "./pg-group-commit.js";
