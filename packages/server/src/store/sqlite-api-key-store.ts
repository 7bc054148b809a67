/**
 * The API keys in the SQLite store's database (table of `server-migrations.ts`), through the
 * store's handle: written in the store's group commit, with its durability.
 */
import type { SqliteHandle } from "@tapedeck/engine/sqlite";
import { type ApiKeyRow, keyFromRow, keyToRow } from "./api-key-rows.js";
import type { ApiKeyRecord, ApiKeyStore } from "./api-key-store.js";

export class SqliteApiKeyStore implements ApiKeyStore {
  readonly #access: SqliteHandle;
  readonly #sql;

  constructor(handle: SqliteHandle) {
    const { db } = handle;
    this.#access = handle;
    this.#sql = {
      insert: db.prepare<[ApiKeyRow]>("INSERT INTO api_keys (id, hash, namespace, labels, created_at) VALUES (@id, @hash, @namespace, @labels, @created_at)"),
      byHash: db.prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE hash = ?"),
      all: db.prepare<[], ApiKeyRow>("SELECT * FROM api_keys ORDER BY created_at, rowid"),
    };
  }

  /** Rejects (writing nothing) if a key with this id or hash exists. */
  put(key: ApiKeyRecord): Promise<void> {
    return this.#access.write(() => {
      this.#sql.insert.run(keyToRow(key));
    });
  }

  getByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.#access.read(() => {
      const row = this.#sql.byHash.get(hash);
      return row === undefined ? undefined : keyFromRow(row);
    });
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.#access.read(() => this.#sql.all.all().map(keyFromRow));
  }
}
