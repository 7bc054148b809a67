/**
 * The API keys in the PostgreSQL store's database (table of `pg-server-migrations.ts`), through
 * the store's handle: written in the store's group commit.
 */
import type { PostgresHandle } from "@tapedeck/engine/postgres";
import type { ApiKeyRecord, ApiKeyStore } from "./api-key-store.js";

interface ApiKeyRow {
  readonly id: string;
  readonly hash: string;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly created_at: number;
}

export class PgApiKeyStore implements ApiKeyStore {
  readonly #handle: PostgresHandle;

  constructor(handle: PostgresHandle) {
    this.#handle = handle;
  }

  /** Rejects (writing nothing) if a key with this id or hash exists. */
  put(key: ApiKeyRecord): Promise<void> {
    const values = [key.id, key.hash, key.namespace ?? null, key.labels === undefined ? null : JSON.stringify(key.labels), key.createdAt];
    return this.#handle.write(async (tx) => {
      await tx.query("INSERT INTO api_keys (id, hash, namespace, labels, created_at) VALUES ($1, $2, $3, $4, $5)", values);
    });
  }

  async getByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.#handle.read<ApiKeyRow>("SELECT id, hash, namespace, labels, created_at FROM api_keys WHERE hash = $1", [hash]);
    return row === undefined ? undefined : keyFromRow(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (await this.#handle.read<ApiKeyRow>("SELECT id, hash, namespace, labels, created_at FROM api_keys ORDER BY created_at, ord")).map(keyFromRow);
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
