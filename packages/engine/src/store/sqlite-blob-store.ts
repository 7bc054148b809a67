/**
 * Spilled results of direct tool sessions in the store's SQLite database (`better-sqlite3`),
 * keyed by (session, handle), in the table of migration 18 (`migrations.ts`). The store passes
 * its group-commit `access`, so blob writes have the store's durability.
 *
 * Invariants: reads and writes name the session in the key, never the handle alone. The text is
 * stored as its JSON string literal, so that any JavaScript string — one with a lone surrogate
 * included, which UTF-8 cannot hold — reads back exactly.
 */
import type Database from "better-sqlite3";
import type { SqliteAccess } from "./sqlite-handle.js";
import type { BlobStore } from "./blob-store.js";

const DIRECT: SqliteAccess = {
  write: (write) => {
    write();
    return Promise.resolve();
  },
  read: (read) => Promise.resolve(read()),
};

export class SqliteBlobStore implements BlobStore {
  readonly #access: SqliteAccess;
  readonly #sql;

  constructor(db: Database.Database, access: SqliteAccess = DIRECT, now: () => number = Date.now) {
    this.#access = access;
    this.#sql = {
      put: db.prepare<[string, string, string, number]>(
        "INSERT INTO direct_blobs (session, handle, text, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
      ),
      get: db.prepare<[string, string], { text: string }>("SELECT text FROM direct_blobs WHERE session = ? AND handle = ?"),
      delete: db.prepare<[string, string]>("DELETE FROM direct_blobs WHERE session = ? AND handle = ?"),
      deleteSession: db.prepare<[string]>("DELETE FROM direct_blobs WHERE session = ?"),
      now,
    };
  }

  put(session: string, handle: string, text: string): Promise<void> {
    return this.#access.write(() => {
      this.#sql.put.run(session, handle, JSON.stringify(text), this.#sql.now());
    });
  }

  get(session: string, handle: string): Promise<string | undefined> {
    return this.#access.read(() => {
      const row = this.#sql.get.get(session, handle);
      return row === undefined ? undefined : (JSON.parse(row.text) as string);
    });
  }

  delete(session: string, handle: string): Promise<void> {
    return this.#access.write(() => {
      this.#sql.delete.run(session, handle);
    });
  }

  deleteSession(session: string): Promise<number> {
    let deleted = 0;
    return this.#access
      .write(() => {
        deleted = this.#sql.deleteSession.run(session).changes;
      })
      .then(() => deleted);
  }
}
