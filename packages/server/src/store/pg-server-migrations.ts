/**
 * The server's own tables in the PostgreSQL store's database (its schema), as numbered
 * migrations recorded in `server_schema_migrations`, applied by the store's rules
 * (`pgMigrate`: one transaction, under the schema's advisory lock, a newer history refused).
 * Numbered on their own: PostgreSQL starts from today's tables. The same columns as SQLite's
 * (`server-migrations.ts`), with `ord` (identity) for SQLite's rowid order.
 */
import type { Migration } from "@tapedeck/engine/postgres";

export const pgServerMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "api keys and webhook outbox",
    sql: `
      -- API keys, by the SHA-256 of their secret (the secret is shown once, never stored).
      CREATE TABLE api_keys (
        ord        bigint GENERATED ALWAYS AS IDENTITY,
        id         text PRIMARY KEY,
        hash       text NOT NULL UNIQUE,
        namespace  text,
        labels     text,
        created_at bigint NOT NULL
      );
      -- Where the server sends events (secret sealed by the server, never in clear here).
      CREATE TABLE webhook_endpoints (
        ord         bigint GENERATED ALWAYS AS IDENTITY,
        id          text PRIMARY KEY,
        url         text NOT NULL,
        events      text,
        namespace   text,
        labels      text,
        secret      text NOT NULL,
        description text,
        created_at  bigint NOT NULL,
        any_address boolean NOT NULL DEFAULT false
      );
      -- The outbox: one row per event and endpoint. attempts: JSON array, oldest first.
      CREATE TABLE webhook_deliveries (
        ord             bigint GENERATED ALWAYS AS IDENTITY,
        id              text PRIMARY KEY,
        endpoint_id     text NOT NULL,
        event_id        text NOT NULL,
        event_type      text NOT NULL,
        body            text NOT NULL,
        status          text NOT NULL,
        attempts        text NOT NULL,
        next_attempt_at bigint,
        created_at      bigint NOT NULL,
        updated_at      bigint NOT NULL
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, ord) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, ord);
    `,
  },
  {
    version: 2,
    name: "shared secret fingerprints",
    sql: `
      -- One row per secret every node of the store must share (the signing secret, the vault's
      -- master key): a keyed, salted fingerprint (runtime/secret-fingerprints.ts), never the
      -- secret nor a plain hash of it. The first node records it; a node whose own differs is refused.
      CREATE TABLE server_secret_fingerprints (
        name        text PRIMARY KEY,
        salt        text NOT NULL,
        fingerprint text NOT NULL,
        recorded_at bigint NOT NULL
      );
    `,
  },
];
