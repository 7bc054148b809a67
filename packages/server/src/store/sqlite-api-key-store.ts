/**
 * The API keys in the SQLite store's database (table of `server-migrations.ts`), through the
 * store's handle: written in the store's group commit, with its durability.
 */
import type { SqliteHandle } from "@tapedeck/engine/sqlite";
import type { ApiKeyRecord, ApiKeyStore } from "./api-key-store.js";

interface ApiKeyRow {
  readonly id: string;
  readonly hash: string;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly created_at: number;
}

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
      this.#sql.insert.run({
        id: key.id,
        hash: key.hash,
        namespace: key.namespace ?? null,
        labels: key.labels === undefined ? null : JSON.stringify(key.labels),
        created_at: key.createdAt,
      });
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

function keyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    hash: row.hash,
    ...(row.namespace !== null && { namespace: row.namespace }),
    ...(row.labels !== null && { labels: JSON.parse(row.labels) as Record<string, string> }),
    createdAt: row.created_at,
  };
}
