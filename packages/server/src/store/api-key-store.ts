/**
 * The server's API keys (a server concept: the engine knows nothing of them), kept in the same
 * database as the engine's store (`server-stores.ts`). Only the hash of a key's secret is kept:
 * whoever reads the store cannot use the key. Contract: `api-key-store-contract.ts`.
 *
 * Durability: as for the engine's store, a resolved write is committed.
 */
export interface ApiKeyStore {
  /** Saves an API key, known by the hash of its secret. Fails (writing nothing) if its id or hash exists. */
  put(key: ApiKeyRecord): Promise<void>;
  /** The key whose secret hashes to `hash`, if any. */
  getByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
}

/** An API key of the HTTP server. `namespace` and `labels` limit the runs it reaches; absent, it is not limited. */
export interface ApiKeyRecord {
  /** A public name for the key (`key_…`): safe to log and show. */
  readonly id: string;
  /** Hex SHA-256 of the key's secret. */
  readonly hash: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly createdAt: number;
}
