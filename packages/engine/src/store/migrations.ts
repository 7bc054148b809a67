/**
 * The SQLite schema, as ordered, numbered migrations applied when a store opens.
 *
 * Invariants:
 * - A released migration never changes; a schema change is a new migration at the end, with the
 *   next number. Numbers run 1, 2, 3… without gaps.
 * - `schema_migrations` lists exactly the migrations applied to this database.
 * - Pending migrations apply in one transaction: all of them or none.
 * - A database holding a number this build does not know was written by a newer Tapedeck; it is
 *   refused, because an older build could silently damage data it does not understand.
 *
 * Migrations 4, 6 and part of 8 created the HTTP server's tables (API keys, the webhook outbox)
 * before the server owned them; they stay as released, and the server's own migrations
 * (`packages/server/src/store/server-migrations.ts`) adopt those tables. The engine's code no
 * longer reads them.
 */
import type BetterSqlite3 from "better-sqlite3";
import { checkHistoryTable, pendingMigrations, type Migration } from "./migration-plan.js";

export type { Migration } from "./migration-plan.js";

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: "runs, journal and toolsets",
    sql: `
      CREATE TABLE toolsets (
        id   TEXT PRIMARY KEY,
        body TEXT NOT NULL
      );
      CREATE TABLE runs (
        id             TEXT PRIMARY KEY,
        toolset_id     TEXT NOT NULL,
        status         TEXT NOT NULL,
        source         TEXT NOT NULL,
        js             TEXT NOT NULL,
        source_map     TEXT NOT NULL,
        input          TEXT NOT NULL,
        output         TEXT,
        error          TEXT,
        labels         TEXT,
        namespace      TEXT,
        parent_id      TEXT,
        created_at     INTEGER NOT NULL,
        updated_at     INTEGER NOT NULL,
        journal_length INTEGER NOT NULL
      );
      -- listRuns filters by status and/or namespace and sorts newest first.
      CREATE INDEX runs_by_status ON runs (status, created_at);
      CREATE INDEX runs_by_namespace ON runs (namespace, created_at);
      CREATE INDEX runs_by_created ON runs (created_at);
      -- Clustered on (run_id, idx): reading one run's journal is a range scan (4x faster than a
      -- rowid table, whose rows of one run are scattered among other runs' rows).
      CREATE TABLE journal (
        run_id TEXT NOT NULL,
        idx    INTEGER NOT NULL,
        kind   TEXT NOT NULL,
        seq    INTEGER,
        at     INTEGER NOT NULL,
        body   TEXT NOT NULL,
        PRIMARY KEY (run_id, idx)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: "observed result shapes",
    sql: `
      -- Keys and types of the results of tools without an output schema (never values).
      CREATE TABLE observed_shapes (
        toolset_id TEXT NOT NULL,
        tool       TEXT NOT NULL,
        shape      TEXT NOT NULL,
        PRIMARY KEY (toolset_id, tool)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: "waits, signals and webhooks",
    sql: `
      -- What the run waits for (JSON RunWait[]): set while it is waiting, and while a call of it waits for a decision.
      ALTER TABLE runs ADD COLUMN waits TEXT;
      -- A waiting run's earliest timer (a sleep, a signal's timeout): when the timer service resumes it.
      ALTER TABLE runs ADD COLUMN wake_at INTEGER;
      -- How many of its waits need a decision (approve or reject): what listing approvals scans.
      ALTER TABLE runs ADD COLUMN decisions INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX runs_by_wake ON runs (wake_at) WHERE status = 'waiting' AND wake_at IS NOT NULL;
      CREATE INDEX runs_needing_decision ON runs (created_at) WHERE decisions > 0;
      -- Signals sent to a run, kept until a signal() call of the run takes them (consumed_seq).
      CREATE TABLE signals (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id       TEXT NOT NULL,
        name         TEXT NOT NULL,
        payload      TEXT NOT NULL,
        key          TEXT,
        at           INTEGER NOT NULL,
        consumed_seq INTEGER
      );
      CREATE INDEX signals_pending ON signals (run_id, name, id) WHERE consumed_seq IS NULL;
      CREATE UNIQUE INDEX signals_by_key ON signals (run_id, key) WHERE key IS NOT NULL;
      -- Run-bound webhook URLs, by the SHA-256 of their token (the token itself is only in the URL).
      CREATE TABLE webhooks (
        token_hash TEXT PRIMARY KEY,
        run_id     TEXT NOT NULL,
        name       TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    name: "api keys",
    sql: `
      -- API keys of the HTTP server, by the SHA-256 of their secret (the secret is shown once, never stored).
      -- namespace and labels (JSON object) limit what a key reaches; NULL: not limited.
      CREATE TABLE api_keys (
        id         TEXT PRIMARY KEY,
        hash       TEXT NOT NULL UNIQUE,
        namespace  TEXT,
        labels     TEXT,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "run leases and requests",
    sql: `
      -- The engine executing or keeping a run, and until when its lease holds: another engine
      -- takes the run over only once the lease has lapsed (its holder died).
      ALTER TABLE runs ADD COLUMN owner TEXT;
      ALTER TABLE runs ADD COLUMN owner_until INTEGER;
      CREATE INDEX runs_by_owner ON runs (owner) WHERE owner IS NOT NULL;
      -- What other processes asked of a run another engine holds (a signal arrived, a decision,
      -- a cancel): its holder applies them, in order.
      CREATE TABLE run_requests (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        body   TEXT NOT NULL,
        at     INTEGER NOT NULL
      );
      CREATE INDEX run_requests_by_run ON run_requests (run_id, id);
    `,
  },
  {
    version: 6,
    name: "webhook outbox",
    sql: `
      -- Where the HTTP server sends events. secret: sealed by the server (never in clear here);
      -- events (JSON array) NULL: every type; namespace, labels (JSON object) NULL: not limited.
      CREATE TABLE webhook_endpoints (
        id          TEXT PRIMARY KEY,
        url         TEXT NOT NULL,
        events      TEXT,
        namespace   TEXT,
        labels      TEXT,
        secret      TEXT NOT NULL,
        description TEXT,
        created_at  INTEGER NOT NULL
      );
      -- The outbox: one row per event and endpoint, written when the event happens and sent by the
      -- server's delivery loop until a 2xx or the last attempt. attempts: JSON array, oldest first.
      CREATE TABLE webhook_deliveries (
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
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id);
    `,
  },
  {
    version: 7,
    name: "credentials",
    sql: `
      -- The credential vault (secrets/vault.ts). A value is only ever here sealed: AES-256-GCM
      -- ciphertext + tag in \`sealed\`, under the master key named by key_id, with the row's
      -- scope_key, name, kind and hosts as additional authenticated data.
      -- scope_key: JSON array, ["toolset", id] | ["namespace", toolset id, ns] | ["run", id].
      -- hosts: JSON array of normalised host patterns.
      CREATE TABLE credentials (
        scope_key  TEXT NOT NULL,
        name       TEXT NOT NULL,
        kind       TEXT NOT NULL,
        hosts      TEXT NOT NULL,
        key_id     TEXT NOT NULL,
        iv         TEXT NOT NULL,
        sealed     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (scope_key, name)
      );
    `,
  },
  {
    version: 8,
    name: "run events",
    sql: `
      -- Run events (parked, ended, decision needed) written in the commit that makes them happen
      -- when the engine records events (the server does), and removed by the reader that fans
      -- them out (the webhook outbox). event: the RunEvent as JSON. The id orders them.
      CREATE TABLE run_events (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        event  TEXT NOT NULL,
        at     INTEGER NOT NULL
      );
      -- any_address 1: made by the operator, so deliveries may go wherever its host resolves
      -- (a receiver on loopback); 0: a tenant's, delivered only to public addresses.
      ALTER TABLE webhook_endpoints ADD COLUMN any_address INTEGER NOT NULL DEFAULT 0;
      -- Endpoints made before this column: an unscoped one could only be the operator's (a
      -- limited key's endpoints carry its namespace or labels), so it keeps reaching any address.
      UPDATE webhook_endpoints SET any_address = 1 WHERE namespace IS NULL AND labels IS NULL;
    `,
  },
  {
    version: 9,
    name: "idempotent starts and run expiry",
    sql: `
      -- The key a run was started with (an agent derives it from its labels and the model's tool
      -- call id): a start repeating a key of its namespace gets the first run. Unique per
      -- namespace; a run without a namespace is in '' here, which no namespace can be (they
      -- are at least one character long).
      ALTER TABLE runs ADD COLUMN idempotency_key TEXT;
      CREATE UNIQUE INDEX runs_by_idempotency_key ON runs (coalesce(namespace, ''), idempotency_key) WHERE idempotency_key IS NOT NULL;
      -- When a run that has not ended by then is cancelled (its TTL passed); NULL: never. Led by
      -- status so that the sweep's search (status IN the three not ended, expires_at <= now)
      -- reads only expired runs, however many wait.
      ALTER TABLE runs ADD COLUMN expires_at INTEGER;
      CREATE INDEX runs_by_expiry ON runs (status, expires_at) WHERE expires_at IS NOT NULL;
    `,
  },
  {
    version: 10,
    name: "credential expiry",
    sql: `
      -- When a credential is known to expire (ms since the epoch); NULL: not known. A call that
      -- would send it later parks (credentials.expired) instead of being refused by the server.
      ALTER TABLE credentials ADD COLUMN expires_at INTEGER;
    `,
  },
  {
    version: 11,
    name: "workflow child runs",
    sql: `
      -- A workflow's child run: the run that started it and the seq of that start call
      -- (workflows.<name>.start). parent_id stays for forks. The child's end wakes its caller.
      ALTER TABLE runs ADD COLUMN caller_run_id TEXT;
      ALTER TABLE runs ADD COLUMN caller_seq INTEGER;
      CREATE INDEX runs_by_caller ON runs (caller_run_id) WHERE caller_run_id IS NOT NULL;
    `,
  },
  {
    version: 14,
    name: "host faults",
    sql: `
      -- Executions of the run that ended in a fault of the host (its process died under it, or
      -- the engine failed executing it) since it last made progress, and what the last one was.
      -- Past a few the run is failed instead of executed again: it cannot fault a server forever.
      ALTER TABLE runs ADD COLUMN host_faults INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE runs ADD COLUMN last_fault TEXT;
    `,
  },
  {
    version: 17,
    name: "host tasks",
    sql: `
      -- Host tool calls for workers, one row per attempt (sources/host-task-queue.ts): queued,
      -- claimed under a lease, answered, lapsed or withdrawn. In the store rather than in a
      -- process, so that a worker polling any process sees every task and an engine that stops
      -- loses none: a resumed run finds its unclaimed attempt still queued. tool_group: the
      -- tool's group, for polls of group.*; namespace, labels (JSON) and toolsets (JSON array:
      -- the run's toolset and those it derives from) decide which polls may claim it; waiter:
      -- the process running the call. Rows go once their outcome is taken.
      CREATE TABLE host_tasks (
        id                   TEXT PRIMARY KEY,
        run_id               TEXT NOT NULL,
        seq                  INTEGER NOT NULL,
        attempt              INTEGER NOT NULL,
        tool                 TEXT NOT NULL,
        tool_group           TEXT NOT NULL,
        args                 TEXT NOT NULL,
        idempotency_key      TEXT NOT NULL,
        traceparent          TEXT NOT NULL,
        heartbeat_timeout_ms INTEGER NOT NULL,
        namespace            TEXT,
        labels               TEXT,
        toolsets             TEXT NOT NULL,
        waiter               TEXT NOT NULL,
        state                TEXT NOT NULL,
        lease                TEXT,
        lease_until          INTEGER,
        answer               TEXT,
        created_at           INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX host_tasks_by_attempt ON host_tasks (run_id, seq, attempt);
      CREATE INDEX host_tasks_queued_by_tool ON host_tasks (tool) WHERE state = 'queued';
      CREATE INDEX host_tasks_queued_by_group ON host_tasks (tool_group) WHERE state = 'queued';
      CREATE INDEX host_tasks_by_lease ON host_tasks (lease_until) WHERE state IN ('claimed', 'withdrawn');
    `,
  },
  {
    version: 18,
    name: "direct tool blobs",
    sql: `
      -- Results of direct tool sessions too large to show the model whole, read back with
      -- fetch_blob: by session (a handle of another session finds nothing) and handle (a hash
      -- of the session and the text). text is the JSON string literal of the result's text.
      CREATE TABLE direct_blobs (
        session    TEXT NOT NULL,
        handle     TEXT NOT NULL,
        text       TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session, handle)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 19,
    name: "rate limits",
    sql: `
      -- The calls each (namespace, tool) was allowed, for the tools' sliding-window rate limits
      -- (store/sqlite-rate-limit-store.ts): in the store's database so every process on a data
      -- folder shares the windows, and they survive a restart. key: JSON [namespace, tool].
      CREATE TABLE rate_limit_calls (
        id  INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        at  INTEGER NOT NULL
      );
      CREATE INDEX rate_limit_calls_by_key ON rate_limit_calls (key, at);
    `,
  },
  {
    version: 20,
    name: "host tasks by idempotency key",
    sql: `
      -- A host task is an attempt of one call or of one sub-call: a user tool's invocations of
      -- host tools share their call's (run_id, seq, attempt), each with its own idempotency key
      -- ({run}/{seq}.{n}). The key, not the seq, tells the tasks apart.
      DROP INDEX host_tasks_by_attempt;
      CREATE UNIQUE INDEX host_tasks_by_key ON host_tasks (run_id, idempotency_key, attempt);
    `,
  },
  {
    version: 21,
    name: "node leases and lease epochs",
    sql: `
      -- One lease per engine process (its owner id), renewed in one row whatever it holds: a
      -- run's lease holds while its owner's does (docs/design/postgres.md, "Fencing").
      -- lease_until 0 is a lease given up at a clean stop.
      CREATE TABLE node_leases (
        holder      TEXT PRIMARY KEY,
        lease_until INTEGER NOT NULL
      );
      -- The fencing token: bumped by every claim that changes the run's owner; every write of the
      -- holder names the one it won, and a stale one is refused (LeaseLostError).
      ALTER TABLE runs ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
      -- When a run left running was released after a fault of its host (owner NULL), wall-clock
      -- ms: the takeover scan takes it again after a backoff. (The old per-run lease deadline.)
      ALTER TABLE runs RENAME COLUMN owner_until TO released_at;
      UPDATE runs SET released_at = NULL;
      CREATE INDEX runs_released ON runs (released_at) WHERE owner IS NULL AND released_at IS NOT NULL;
    `,
  },
  {
    version: 22,
    name: "crashes among host faults",
    sql: `
      -- Of host_faults, the takeovers after the holding process died: forgiven once a later
      -- execution gets the run to where it only waits for answers (runs/host-faults.ts).
      ALTER TABLE runs ADD COLUMN host_crashes INTEGER NOT NULL DEFAULT 0;
      -- Faults counted before whose last was a takeover are taken for crashes (the count kept no kinds).
      UPDATE runs SET host_crashes = host_faults
        WHERE last_fault = 'the process executing it stopped without shutting down (it crashed or was killed)';
    `,
  },
  {
    version: 23,
    name: "toolset owners",
    sql: `
      -- The scopes a toolset belongs to (store/toolset-store.ts): one row per scope, its namespace
      -- and labels as one canonical JSON text (toolset-owner-text.ts). A toolset without rows (one
      -- registered before this migration) has no owner: every caller sees it, as before.
      CREATE TABLE toolset_owners (
        toolset_id TEXT NOT NULL,
        owner      TEXT NOT NULL,
        PRIMARY KEY (toolset_id, owner)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 24,
    name: "schedules and their fires",
    sql: `
      -- Schedules (engine/src/schedules/): what a fire starts and its policies are one JSON
      -- document (body); what the firing reads and claims is in columns. next_fire_at NULL: no
      -- more fires (end date, count). docs/design/schedules.md.
      CREATE TABLE schedules (
        id           TEXT PRIMARY KEY,
        namespace    TEXT,
        labels       TEXT,
        body         TEXT NOT NULL,
        paused       INTEGER NOT NULL DEFAULT 0,
        next_fire_at INTEGER,
        fire_count   INTEGER NOT NULL DEFAULT 0,
        created_at   INTEGER NOT NULL,
        updated_at   INTEGER NOT NULL
      );
      CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE paused = 0 AND next_fire_at IS NOT NULL;
      CREATE INDEX schedules_by_namespace ON schedules (namespace, created_at);
      -- One row per fire, unique by (schedule, time): the claim that makes a fire happen once
      -- across processes; its run's idempotency key is derived from the same pair.
      CREATE TABLE schedule_fires (
        schedule_id TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        fire_at     INTEGER NOT NULL,
        kind        TEXT NOT NULL,
        state       TEXT NOT NULL,
        run_id      TEXT,
        reason      TEXT,
        held_by     TEXT NOT NULL,
        claimed_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        PRIMARY KEY (schedule_id, fire_at)
      );
      CREATE INDEX schedule_fires_open ON schedule_fires (claimed_at) WHERE state IN ('claimed', 'buffered');
    `,
  },
  {
    version: 25,
    name: "purge by end time",
    sql: `
      -- What a purge (retention's sweep, runs purge --before) reads, oldest first, stopping at its
      -- batch's size: the ended runs by when they ended (an ended run's updated_at is its end, it
      -- is never written again), and the direct sessions by when they were last used (store/purge-sql.ts).
      CREATE INDEX runs_ended ON runs (updated_at) WHERE status IN ('completed', 'failed', 'cancelled');
      CREATE INDEX runs_sessions ON runs (updated_at) WHERE substr(id, 1, 4) = 'ses_';
      `,
  },
  {
    version: 26,
    name: "run change order",
    sql: `
      -- The order in which runs were created or changed (createRun, an append with a patch): each
      -- such write gives the run the next number, max + 1, in its commit. SQLite has one writer at
      -- a time, so the numbers become durable in their order, and a reader that saw up to N never
      -- misses a later commit with a smaller one: what GET /v1/events resumes from
      -- (docs/design/events.md). NULL: not changed since this migration.
      ALTER TABLE runs ADD COLUMN change_no INTEGER;
      CREATE INDEX runs_by_change ON runs (change_no) WHERE change_no IS NOT NULL;
    `,
  },
];

/** The engine's history table: which of `migrations` a database has. */
export const MIGRATIONS_TABLE = "schema_migrations";

/**
 * Applies the migrations `db` lacks, in one transaction, and returns their numbers (empty when
 * the database is up to date). Throws, changing nothing, when the database is newer than this
 * build. Another part sharing the database (the server) passes its own list and history table.
 */
export function migrate(db: BetterSqlite3.Database, list: readonly Migration[] = migrations, history = MIGRATIONS_TABLE): number[] {
  checkHistoryTable("migrate", history);
  db.exec(`CREATE TABLE IF NOT EXISTS ${history} (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  // IMMEDIATE takes the write lock before reading what is applied, so two processes opening
  // the same new file do not both apply migration 1.
  return db.transaction(() => applyPending(db, list, history)).immediate();
}

function applyPending(db: BetterSqlite3.Database, list: readonly Migration[], history: string): number[] {
  const rows = db.prepare<[], { version: number }>(`SELECT version FROM ${history}`).all();
  const applied = new Set(rows.map((row) => row.version));
  const record = db.prepare(`INSERT INTO ${history} (version, name, applied_at) VALUES (?, ?, ?)`);
  const pending = pendingMigrations(list, applied, { database: `The database ${db.name}`, history, engineHistory: MIGRATIONS_TABLE });
  for (const migration of pending) {
    db.exec(migration.sql);
    record.run(migration.version, migration.name, Date.now());
  }
  return pending.map((migration) => migration.version);
}
