/**
 * What a part sharing the SQLite store's database gets from it: its connection, its group
 * commit, its migration rules, and the one operation on the engine's tables that another part
 * needs inside its own commits. The server keeps its tables (API keys, the webhook outbox) this
 * way, in the data folder's one database: one file to back up, one durability setting, writes
 * sharing the store's commits, and (what needs it) the removal of a recorded run event in the
 * commit that saves the deliveries made of it. Reached through `@tapedeck/engine/sqlite`.
 */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";

/** How a part runs a write (in the store's group commit) and a read (on the open database). */
export interface SqliteAccess {
  /** Runs `write` (synchronous SQL) in the store's next batch, in a SAVEPOINT of its own; resolves once committed. Rejects once the store is closed. */
  readonly write: (write: () => void) => Promise<void>;
  /** Runs `read` now, on committed data. Rejects once the store is closed. */
  readonly read: <T>(read: () => T) => Promise<T>;
}

export interface SqliteHandle extends SqliteAccess {
  /** The connection: prepare statements on it once. Never begin or commit a transaction on it yourself: write through `write`. */
  readonly db: Database.Database;
  /**
   * Applies a part's own migrations, recorded in its own history table (`history`, e.g.
   * `server_schema_migrations`), by the rules of the store's (`migrations.ts`): numbered, in
   * one transaction, a history from a newer Tapedeck refused. Returns the versions applied.
   */
  migrate(history: string, migrations: readonly Migration[]): number[];
  /** Inside a `write`: removes a run event the engine recorded; false when a reader removed it already. */
  removeRecordedEvent(id: number): boolean;
}

/** The better-sqlite3 connection type, for the statements a part prepares. */
export type SqliteDatabase = Database.Database;
