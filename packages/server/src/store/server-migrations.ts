/**
 * The server's own tables in the SQLite store's database, as numbered migrations recorded in
 * `server_schema_migrations` (the engine's are in `schema_migrations`), applied by the store's
 * rules when the server opens its stores: numbered without gaps, a released one never changes,
 * pending ones in one transaction, a history from a newer Tapedeck refused.
 *
 * Why in the engine's database, through its handle: one file to back up and move, one
 * durability setting, writes sharing the store's commits (one flush), and a fan-out that removes
 * the engine's recorded run events in the commit that saves their deliveries.
 */
import type { Migration } from "@tapedeck/engine/sqlite";

/** The history table of the server's migrations. */
export const SERVER_MIGRATIONS_TABLE = "server_schema_migrations";

export const serverMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "api keys and webhook outbox",
    // The engine's migrations 4, 6 and 8 created these tables before the server owned them:
    // IF NOT EXISTS adopts them as they are, and makes them in a database that lacks them.
    sql: `
      -- API keys, by the SHA-256 of their secret (the secret is shown once, never stored).
      -- namespace and labels (JSON object) limit what a key reaches; NULL: not limited.
      CREATE TABLE IF NOT EXISTS api_keys (
        id         TEXT PRIMARY KEY,
        hash       TEXT NOT NULL UNIQUE,
        namespace  TEXT,
        labels     TEXT,
        created_at INTEGER NOT NULL
      );
      -- Where the server sends events. secret: sealed by the server (never in clear here);
      -- events (JSON array) NULL: every type; namespace, labels (JSON object) NULL: not limited;
      -- any_address 1: the operator's, delivered wherever its host resolves; 0: a tenant's,
      -- delivered only to public addresses.
      CREATE TABLE IF NOT EXISTS webhook_endpoints (
        id          TEXT PRIMARY KEY,
        url         TEXT NOT NULL,
        events      TEXT,
        namespace   TEXT,
        labels      TEXT,
        secret      TEXT NOT NULL,
        description TEXT,
        created_at  INTEGER NOT NULL,
        any_address INTEGER NOT NULL DEFAULT 0
      );
      -- The outbox: one row per event and endpoint, written when the event happens and sent by the
      -- delivery loop until a 2xx or the last attempt. attempts: JSON array, oldest first.
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id              TEXT PRIMARY KEY,
        endpoint_id     TEXT NOT NULL,
        event_id        TEXT NOT NULL,
        event_type      TEXT NOT NULL,
        body            TEXT NOT NULL,
        status          TEXT NOT NULL,
        attempts        TEXT NOT NULL,
        next_attempt_at INTEGER,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id);
    `,
  },
];
