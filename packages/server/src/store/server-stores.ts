/**
 * What the server keeps besides the engine's store: its API keys and its webhook outbox,
 * server concepts the engine never reads. They live in the same database as the engine's store
 * (see `server-migrations.ts` for why), reached through the store implementation's handle.
 */
import type { Store } from "@tapedeck/engine";
import { postgresHandle } from "@tapedeck/engine/postgres";
import { sqliteHandle } from "@tapedeck/engine/sqlite";
import type { ApiKeyStore } from "./api-key-store.js";
import { PgApiKeyStore } from "./pg-api-key-store.js";
import { pgServerMigrations } from "./pg-server-migrations.js";
import { PgWebhookOutbox } from "./pg-webhook-outbox.js";
import { PgSecretFingerprintStore } from "./pg-secret-fingerprint-store.js";
import type { SecretFingerprintStore } from "./secret-fingerprint-store.js";
import { SERVER_MIGRATIONS_TABLE, serverMigrations } from "./server-migrations.js";
import { SqliteApiKeyStore } from "./sqlite-api-key-store.js";
import { SqliteWebhookOutbox } from "./sqlite-webhook-outbox.js";
import type { WebhookOutboxStore } from "./webhook-outbox-store.js";

export interface ServerStores {
  readonly apiKeys: ApiKeyStore;
  readonly webhookOutbox: WebhookOutboxStore;
  /** The shared secrets' fingerprints: only a store several nodes share (PostgreSQL) has them; one data folder keeps its secrets itself. */
  readonly secretFingerprints?: SecretFingerprintStore;
}

/**
 * The server's stores in `store`'s database, its tables migrated (throws, changing nothing, for
 * a database whose server tables come from a newer Tapedeck). They close with `store`. Throws
 * for a store whose database the server cannot keep its tables in (neither SQLite nor PostgreSQL).
 */
export async function openServerStores(store: Store): Promise<ServerStores> {
  const sqlite = sqliteHandle(store);
  if (sqlite !== undefined) {
    sqlite.migrate(SERVER_MIGRATIONS_TABLE, serverMigrations);
    return { apiKeys: new SqliteApiKeyStore(sqlite), webhookOutbox: new SqliteWebhookOutbox(sqlite) };
  }
  const postgres = postgresHandle(store);
  if (postgres !== undefined) {
    await postgres.migrate(SERVER_MIGRATIONS_TABLE, pgServerMigrations);
    return { apiKeys: new PgApiKeyStore(postgres), webhookOutbox: new PgWebhookOutbox(postgres), secretFingerprints: new PgSecretFingerprintStore(postgres) };
  }
  throw new Error(
    'The server keeps its API keys and webhook outbox in the database of the engine\'s store, and knows how to only for the SQLite store of a data folder and the PostgreSQL store; open the store with openStore(<data folder>) or openStore("postgres://…").',
  );
}
