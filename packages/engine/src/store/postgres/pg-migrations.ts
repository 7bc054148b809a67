/**
 * The PostgreSQL schema, as ordered, numbered migrations applied when a store opens: the same
 * rules as SQLite's (`../migrations.ts`), numbered on their own (PostgreSQL starts from today's
 * schema, so its migration 1 is SQLite's 1 to 17 at once).
 *
 * Invariants:
 * - A released migration never changes; a change is a new migration at the end, numbered next.
 * - `schema_migrations` (in the store's schema) lists exactly the migrations applied.
 * - Pending migrations apply in one transaction (PostgreSQL's DDL is transactional), under an
 *   advisory lock of the schema: nodes opening one new database at once apply each migration
 *   once, the others wait and find it done.
 * - A database holding a number this build does not know was written by a newer Tapedeck: it is
 *   refused, changing nothing.
 *
 * Columns: times are `bigint` milliseconds since the epoch; JSON is kept as `text` exactly as
 * written (a journal entry reads back byte for byte; `jsonb` would refuse `\u0000` and reorder
 * keys); `ord` columns (identity) order rows as SQLite's rowid does.
 */
import type pg from "pg";
import { checkHistoryTable, pendingMigrations } from "../migration-plan.js";
import type { Migration } from "../migrations.js";

export const pgMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "runs, journal, toolsets, signals, webhooks, leases, credentials, run events and host tasks",
    sql: `
      CREATE TABLE toolsets (
        id   text PRIMARY KEY,
        body text NOT NULL
      );
      CREATE TABLE observed_shapes (
        toolset_id text NOT NULL,
        tool       text NOT NULL,
        shape      text NOT NULL,
        PRIMARY KEY (toolset_id, tool)
      );
      CREATE TABLE runs (
        ord             bigint GENERATED ALWAYS AS IDENTITY,
        id              text PRIMARY KEY,
        toolset_id      text NOT NULL,
        status          text NOT NULL,
        source          text NOT NULL,
        js              text NOT NULL,
        source_map      text NOT NULL,
        input           text NOT NULL,
        output          text,
        error           text,
        labels          text,
        namespace       text,
        parent_id       text,
        created_at      bigint NOT NULL,
        updated_at      bigint NOT NULL,
        journal_length  integer NOT NULL,
        waits           text,
        wake_at         bigint,
        decisions       integer NOT NULL DEFAULT 0,
        owner           text,
        owner_until     bigint,
        idempotency_key text,
        expires_at      bigint,
        caller_run_id   text,
        caller_seq      integer,
        host_faults     integer NOT NULL DEFAULT 0,
        last_fault      text
      );
      CREATE INDEX runs_by_status ON runs (status, created_at);
      CREATE INDEX runs_by_namespace ON runs (namespace, created_at);
      CREATE INDEX runs_by_created ON runs (created_at, ord);
      CREATE INDEX runs_by_wake ON runs (wake_at) WHERE status = 'waiting' AND wake_at IS NOT NULL;
      CREATE INDEX runs_needing_decision ON runs (created_at) WHERE decisions > 0;
      CREATE INDEX runs_by_owner ON runs (owner) WHERE owner IS NOT NULL;
      -- A start repeating a key of its namespace gets the first run ('' is no namespace).
      CREATE UNIQUE INDEX runs_by_idempotency_key ON runs ((coalesce(namespace, '')), idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX runs_by_expiry ON runs (status, expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX runs_by_caller ON runs (caller_run_id) WHERE caller_run_id IS NOT NULL;
      CREATE TABLE journal (
        run_id text NOT NULL,
        idx    integer NOT NULL,
        kind   text NOT NULL,
        seq    integer,
        at     bigint NOT NULL,
        body   text NOT NULL,
        PRIMARY KEY (run_id, idx)
      );
      CREATE TABLE signals (
        id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id       text NOT NULL,
        name         text NOT NULL,
        payload      text NOT NULL,
        key          text,
        at           bigint NOT NULL,
        consumed_seq integer
      );
      CREATE INDEX signals_pending ON signals (run_id, name, id) WHERE consumed_seq IS NULL;
      CREATE UNIQUE INDEX signals_by_key ON signals (run_id, key) WHERE key IS NOT NULL;
      CREATE TABLE webhooks (
        token_hash text PRIMARY KEY,
        run_id     text NOT NULL,
        name       text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE run_requests (
        id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id text NOT NULL,
        body   text NOT NULL,
        at     bigint NOT NULL
      );
      CREATE INDEX run_requests_by_run ON run_requests (run_id, id);
      CREATE TABLE credentials (
        ord        bigint GENERATED ALWAYS AS IDENTITY,
        scope_key  text NOT NULL,
        name       text NOT NULL,
        kind       text NOT NULL,
        hosts      text NOT NULL,
        key_id     text NOT NULL,
        iv         text NOT NULL,
        sealed     text NOT NULL,
        expires_at bigint,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (scope_key, name)
      );
      CREATE TABLE run_events (
        id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id text NOT NULL,
        event  text NOT NULL,
        at     bigint NOT NULL
      );
      -- Host tool calls for workers, one row per attempt (see ../sqlite-host-task-store.ts).
      -- labels and toolsets are jsonb: a claim filters on them in SQL, so that LIMIT and
      -- FOR UPDATE SKIP LOCKED see only the tasks the poll may take.
      CREATE TABLE host_tasks (
        ord                  bigint GENERATED ALWAYS AS IDENTITY,
        id                   text PRIMARY KEY,
        run_id               text NOT NULL,
        seq                  integer NOT NULL,
        attempt              integer NOT NULL,
        tool                 text NOT NULL,
        tool_group           text NOT NULL,
        args                 text NOT NULL,
        idempotency_key      text NOT NULL,
        traceparent          text NOT NULL,
        heartbeat_timeout_ms bigint NOT NULL,
        namespace            text,
        labels               jsonb,
        toolsets             jsonb NOT NULL,
        waiter               text NOT NULL,
        state                text NOT NULL,
        lease                text,
        lease_until          bigint,
        answer               text,
        created_at           bigint NOT NULL
      );
      CREATE UNIQUE INDEX host_tasks_by_attempt ON host_tasks (run_id, seq, attempt);
      CREATE INDEX host_tasks_queued ON host_tasks (ord) WHERE state = 'queued';
      CREATE INDEX host_tasks_by_lease ON host_tasks (lease_until) WHERE state IN ('claimed', 'withdrawn');
    `,
  },
  {
    version: 2,
    name: "direct tool blobs",
    sql: `
      -- SQLite's migration 18. Results of direct tool sessions too large to show the model whole,
      -- read back with fetch_blob: by session (a handle of another session finds nothing) and
      -- handle (a hash of the session and the text). text is the JSON string literal of the text.
      CREATE TABLE direct_blobs (
        session    text NOT NULL,
        handle     text NOT NULL,
        text       text NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (session, handle)
      );
      `,
  },
  {
    version: 3,
    name: "rate limits",
    sql: `
      -- The calls each (namespace, tool) was allowed, for the tools' sliding-window rate limits
      -- (pg-rate-limit-store.ts): every node on the database counts the same calls. key: JSON
      -- [namespace, tool]. (SQLite's migration 19.)
      CREATE TABLE rate_limit_calls (
        ord bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key text NOT NULL,
        at  bigint NOT NULL
      );
      CREATE INDEX rate_limit_calls_by_key ON rate_limit_calls (key, at);
    `,
  },
  {
    version: 4,
    name: "host tasks by idempotency key",
    sql: `
      -- A host task is an attempt of one call or of one sub-call: a user tool's invocations of
      -- host tools share their call's (run_id, seq, attempt), each with its own idempotency key
      -- ({run}/{seq}.{n}). The key, not the seq, tells the tasks apart. (SQLite's migration 20.)
      DROP INDEX host_tasks_by_attempt;
      CREATE UNIQUE INDEX host_tasks_by_key ON host_tasks (run_id, idempotency_key, attempt);
    `,
  },
  {
    version: 5,
    name: "node leases and lease epochs",
    sql: `
      -- One lease per engine process (its owner id), renewed in one row whatever it holds: a
      -- run's lease holds while its owner's does, so a renewal is one narrow row update (no
      -- rewrite of every held run row, no lock on them). lease_until 0 is a lease given up at a
      -- clean stop. (SQLite's migration 21.)
      CREATE TABLE node_leases (
        holder      text PRIMARY KEY,
        lease_until bigint NOT NULL
      );
      -- The fencing token: bumped by every claim that changes the run's owner; every write of the
      -- holder names the one it won, and a stale one is refused (LeaseLostError).
      ALTER TABLE runs ADD COLUMN lease_epoch integer NOT NULL DEFAULT 0;
      -- When a run left running was released after a fault of its host (owner NULL), wall-clock
      -- ms: the takeover scan takes it again after a backoff. (The old per-run lease deadline.)
      ALTER TABLE runs RENAME COLUMN owner_until TO released_at;
      UPDATE runs SET released_at = NULL;
      CREATE INDEX runs_released ON runs (released_at) WHERE owner IS NULL AND released_at IS NOT NULL;
    `,
  },
  {
    version: 6,
    name: "crashes among host faults",
    sql: `
      -- Of host_faults, the takeovers after the holding process died: forgiven once a later
      -- execution gets the run to where it only waits for answers (runs/host-faults.ts). (SQLite's migration 22.)
      ALTER TABLE runs ADD COLUMN host_crashes integer NOT NULL DEFAULT 0;
      -- Faults counted before whose last was a takeover are taken for crashes (the count kept no kinds).
      UPDATE runs SET host_crashes = host_faults
        WHERE last_fault = 'the process executing it stopped without shutting down (it crashed or was killed)';
    `,
  },
  {
    version: 7,
    name: "toolset owners",
    sql: `
      -- The scopes a toolset belongs to (store/toolset-store.ts): one row per scope, its namespace
      -- and labels as one canonical JSON text (toolset-owner-text.ts). A toolset without rows (one
      -- registered before this migration) has no owner: every caller sees it, as before. (SQLite's migration 23.)
      CREATE TABLE toolset_owners (
        toolset_id text NOT NULL,
        owner      text NOT NULL,
        PRIMARY KEY (toolset_id, owner)
      );
    `,
  },
  {
    version: 8,
    name: "schedules and their fires",
    sql: `
      -- Schedules (engine/src/schedules/): what a fire starts and its policies are one JSON
      -- document (body); what the firing reads and claims is in columns. next_fire_at NULL: no
      -- more fires (end date, count). docs/design/schedules.md. (SQLite's migration 24.)
      CREATE TABLE schedules (
        id           text PRIMARY KEY,
        namespace    text,
        labels       text,
        body         text NOT NULL,
        paused       bigint NOT NULL DEFAULT 0,
        next_fire_at bigint,
        fire_count   bigint NOT NULL DEFAULT 0,
        created_at   bigint NOT NULL,
        updated_at   bigint NOT NULL
      );
      CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE paused = 0 AND next_fire_at IS NOT NULL;
      CREATE INDEX schedules_by_namespace ON schedules (namespace, created_at);
      -- One row per fire, unique by (schedule, time): the claim that makes a fire happen once
      -- across processes; its run's idempotency key is derived from the same pair.
      CREATE TABLE schedule_fires (
        schedule_id text NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        fire_at     bigint NOT NULL,
        kind        text NOT NULL,
        state       text NOT NULL,
        run_id      text,
        reason      text,
        held_by     text NOT NULL,
        claimed_at  bigint NOT NULL,
        updated_at  bigint NOT NULL,
        PRIMARY KEY (schedule_id, fire_at)
      );
      CREATE INDEX schedule_fires_open ON schedule_fires (claimed_at) WHERE state IN ('claimed', 'buffered');
    `,
  },
  {
    version: 9,
    name: "purge by end time",
    sql: `
      -- What a purge reads, oldest first, stopping at its batch's size: ended runs by when they
      -- ended, direct sessions by when they were last used (store/purge-sql.ts). (SQLite's migration 25.)
      CREATE INDEX runs_ended ON runs (updated_at) WHERE status IN ('completed', 'failed', 'cancelled');
      CREATE INDEX runs_sessions ON runs (updated_at) WHERE substr(id, 1, 4) = 'ses_';
      `,
  },
  {
    version: 10,
    name: "run change order",
    sql: `
      -- The transaction that last created or changed the run (createRun, an append with a patch),
      -- as pg_current_xact_id(). Transactions of several nodes commit in any order, so a
      -- sequence would not do: a reader takes only rows of transactions older than every one
      -- still in flight (pg_snapshot_xmin), whose set can no longer grow, ordered by
      -- (changed_xid, id): what GET /v1/events resumes from (docs/design/events.md). (SQLite's
      -- migration 26.) NULL: not changed since this migration.
      ALTER TABLE runs ADD COLUMN changed_xid bigint;
      CREATE INDEX runs_by_change ON runs (changed_xid, id) WHERE changed_xid IS NOT NULL;
    `,
  },
];

/** The engine's history table, in the store's schema. */
export const PG_MIGRATIONS_TABLE = "schema_migrations";

/**
 * Applies the migrations the schema lacks (creating the schema if needed), in one transaction
 * on `client`, and returns their numbers. Throws, changing nothing, when the schema is newer than
 * this build. Another part sharing the database (the server) passes its own list and history table.
 */
export async function pgMigrate(
  client: pg.ClientBase,
  schema: string,
  list: readonly Migration[] = pgMigrations,
  history = PG_MIGRATIONS_TABLE,
): Promise<number[]> {
  checkHistoryTable("pgMigrate", history);
  await client.query("BEGIN");
  try {
    // One migrator per schema at a time, across every node: the others wait here, then find nothing to do.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`tapedeck-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.${history} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    const applied = new Set((await client.query<{ version: number }>(`SELECT version FROM ${schema}.${history}`)).rows.map((row) => row.version));
    const pending = pendingMigrations(list, applied, { database: `The PostgreSQL schema ${schema}`, history, engineHistory: PG_MIGRATIONS_TABLE });
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query(`INSERT INTO ${schema}.${history} (version, name, applied_at) VALUES ($1, $2, $3)`, [migration.version, migration.name, Date.now()]);
    }
    await client.query("COMMIT");
    return pending.map((migration) => migration.version);
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
