/**
 * The store on PostgreSQL (node-postgres), for several Tapedeck nodes sharing one database:
 * runs and journal, signals, leases and requests, toolsets and observed shapes, webhook
 * bindings here; credentials, host tasks and direct tool blobs beside it, on the same pool and group commit; the
 * notifier on LISTEN/NOTIFY. Same contract suites as the SQLite store (`../contracts/`).
 *
 * Invariants:
 * - Every write goes through the group commit (`pg-group-commit.ts`): a resolved promise
 *   means committed (acknowledged by PostgreSQL), and concurrent runs' writes share commits.
 *   Each append is in one transaction: a journal never holds half of an append.
 * - A run's `journal_length` always equals its number of journal rows; an append checks it and
 *   bumps it in the same transaction under the run's row lock, so two writers of one run (on
 *   any nodes) cannot both succeed: the second finds the length moved and conflicts.
 * - Leases are conditional updates of the run's row (`WHERE owner IS NULL OR … lapsed`):
 *   whichever node's update takes the row lock first wins; the other re-reads the row and finds
 *   it held.
 * - Reads run on the pool, outside any write, and see committed data only.
 * - Values are written as JSON text exactly as the SQLite store writes them (`../sqlite-rows.ts`
 *   maps rows both ways for both stores).
 */
import { needsDecision, terminalStatuses, type JournalEntry, type JsonSchema, type JsonValue, type PinnedToolset, type RunEvent } from "@tapedeck/protocol";
import type pg from "pg";
import { GIVEN_UP_UNTIL, runRequestsTopic, type PendingRunRequest } from "../lease-store.js";
import { leaseLost } from "../lease-lost-error.js";
import type { Migration } from "../migrations.js";
import { entryFromRow, journalRow, newRunRow, runFromRow, runOrDamaged, type JournalRow, type RunRow } from "../sqlite-rows.js";
import { StoreConflictError } from "../store-conflict-error.js";
import type {
  CreateRunResult,
  Durability,
  NewRun,
  NewSignal,
  ChangedRun,
  RecordedRunEvent,
  RunPatch,
  RunQuery,
  RunRecord,
  RunRequest,
  Store,
  StoredSignal,
  WebhookBinding,
} from "../store.js";
import { STORE_PROBE_TIMEOUT_MS } from "../store.js";
import type { PgAccess, PgTransaction } from "./pg-access.js";
import { PgBlobStore } from "./pg-blob-store.js";
import { PgPurgeStore } from "./pg-purge-store.js";
import { PgEraseStore } from "./pg-erase-store.js";
import { openPool } from "./pg-connection.js";
import { parsePostgresUrl, redactedUrl, type PostgresLocation } from "./pg-location.js";
import { PgCredentialStore } from "./pg-credential-store.js";
import { PgGroupCommit } from "./pg-group-commit.js";
import { PgRateLimitStore } from "./pg-rate-limit-store.js";
import { PgScheduleStore } from "./pg-schedule-store.js";
import { PgHostTaskStore } from "./pg-host-task-store.js";
import { pgMigrate } from "./pg-migrations.js";
import { PgNotifier } from "./pg-notifier.js";
import { readWithRetry } from "./pg-retry.js";
import { ownerFromText, ownerText } from "../toolset-owner-text.js";
import type { ToolsetOwner } from "../toolset-store.js";
import { RUN_CHANGES_TOPIC, runJournalTopic } from "../run-topics.js";
import { runCounts, type RunCounts } from "../run-store.js";

export interface PostgresStoreOptions {
  /** `on` (default: a commit is acknowledged once PostgreSQL flushed it) or not (`synchronous_commit = off` for this store's sessions). */
  readonly durability?: Durability;
  /** How long a write or read keeps trying to reach the database after a lost connection, ms. Default 30 s. */
  readonly reconnectMs?: number;
  /** How often the notifier's listeners look in the store anyway, ms (`PG_POLL_MS`). */
  readonly pollMs?: number;
}

/**
 * What the store offers a part that keeps its own tables in the same database (the server: API
 * keys, the webhook outbox), as `sqliteHandle` does on SQLite: writes in the store's group
 * commit, reads on its pool, its migration rules, and the removal of a recorded run event inside
 * a write. Reached through `@tapedeck/engine/postgres`.
 */
export interface PostgresHandle {
  /** Runs `write` in the store's next batch (see `PgAccess.write`); it may run again after a lost connection, so it keeps no state outside. */
  readonly write: PgAccess["write"];
  /** Runs one query on the pool, outside any write. */
  readonly read: PgAccess["read"];
  /** The schema the store's tables (and the part's) live in: the connections' search_path. */
  readonly schema: string;
  /** Applies a part's own migrations, in its own history table, by the rules of the store's. */
  readonly migrate: (history: string, migrations: readonly Migration[]) => Promise<number[]>;
  /** Inside a `write`: removes a run event the engine recorded; false when a reader (another node) removed it already. */
  readonly removeRecordedEvent: (tx: PgTransaction, id: number) => Promise<boolean>;
}

const handles = new WeakMap<object, PostgresHandle>();

/** The handle of a PostgreSQL store, for a part that keeps its own tables in the same database (the server); undefined for any other store. */
export function postgresHandle(store: object): PostgresHandle | undefined {
  return handles.get(store);
}

const DEFAULT_LIST_LIMIT = 100;
const DEFAULT_RECONNECT_MS = 30_000;

/** The host fault counted when a run is taken over from an owner that never released it. */
const PROCESS_STOPPED = "the process executing it stopped without shutting down (it crashed or was killed)";

const RUN_COLUMNS = `id, toolset_id, status, source, js, source_map, input, output, error, labels, namespace, parent_id, created_at, updated_at,
  journal_length, waits, wake_at, decisions, owner, l.lease_until, idempotency_key, expires_at, caller_run_id, caller_seq, host_faults, host_crashes, last_fault`;

/** Runs with their owner's lease (`RunRow.lease_until`): what every read of runs selects from. */
const RUNS = "runs LEFT JOIN node_leases l ON l.holder = runs.owner";

/** The lease of a run's owner, in a statement on `runs`: an owner without a lease row counts as given up. */
const OWNER_LEASE = "coalesce((SELECT lease_until FROM node_leases WHERE holder = runs.owner), 0)";

/** What a write that creates or changes a run records of it (migration 10): its transaction, which `changedRuns` orders by. */
const CHANGED_XID = "pg_current_xact_id()::text::bigint";

/** Transactions below this one have all ended: rows they wrote are as they will stay (`changedRuns` reads no further). */
const SETTLED_XID = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint";

const INSERT_RUN = `INSERT INTO runs (id, toolset_id, status, source, js, source_map, input, output, error, labels,
    namespace, parent_id, created_at, updated_at, journal_length, idempotency_key, expires_at, caller_run_id, caller_seq, changed_xid)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, ${CHANGED_XID})
  ON CONFLICT DO NOTHING`;

// A patch field left out keeps the stored value (JSON `null` is the text 'null', not NULL). A run that ends loses its lease.
const UPDATE_RUN = `UPDATE runs SET status = coalesce($2::text, status), output = coalesce($3::text, output),
    error = coalesce($4::text, error), updated_at = coalesce($5::bigint, updated_at), journal_length = $6::integer,
    waits = CASE WHEN $7::boolean THEN $8::text ELSE waits END,
    decisions = CASE WHEN $7::boolean THEN $9::integer ELSE decisions END,
    wake_at = CASE WHEN $10::boolean THEN $11::bigint ELSE wake_at END,
    host_faults = CASE WHEN $12::boolean THEN 0 ELSE host_faults END,
    host_crashes = CASE WHEN $12::boolean THEN 0 ELSE host_crashes END,
    last_fault = CASE WHEN $12::boolean THEN NULL ELSE last_fault END,
    owner = CASE WHEN $2::text IN ('completed', 'failed', 'cancelled') THEN NULL ELSE owner END,
    released_at = CASE WHEN $2::text IN ('completed', 'failed', 'cancelled') THEN NULL ELSE released_at END,
    changed_xid = ${CHANGED_XID}
  WHERE id = $1`;

// A lease given up (0) stays given up: a renewal sent before the give-up cannot revive it.
const RENEW_LEASE = "UPDATE node_leases SET lease_until = $1 WHERE holder = $2 AND lease_until <> 0";

const INSERT_ENTRIES = `INSERT INTO journal (run_id, idx, kind, seq, at, body)
  SELECT $1, e.idx, e.kind, e.seq, e.at, e.body FROM unnest($2::integer[], $3::text[], $4::integer[], $5::bigint[], $6::text[]) AS e (idx, kind, seq, at, body)`;

// The data-modifying CTE runs once whatever the INSERT selects: the INSERT writes only if it bumped the
// length, which it does only under the writer's lease epoch ($9; NULL: an unfenced writer).
const HOT_APPEND = `WITH bumped AS (UPDATE runs SET journal_length = $7 WHERE id = $1 AND journal_length = $8 AND ($9::integer IS NULL OR lease_epoch = $9) RETURNING id)
  INSERT INTO journal (run_id, idx, kind, seq, at, body)
  SELECT $1, e.idx, e.kind, e.seq, e.at, e.body FROM unnest($2::integer[], $3::text[], $4::integer[], $5::bigint[], $6::text[]) AS e (idx, kind, seq, at, body)
  WHERE EXISTS (SELECT 1 FROM bumped)`;

export class PostgresStore implements Store {
  readonly #pool: pg.Pool;
  /** One connection for lease renewals alone (see `renewLeases`). */
  readonly #leasePool: pg.Pool;
  readonly #commits: PgGroupCommit;
  readonly #reconnectMs: number;
  readonly #access: PgAccess;
  /** The store's URL without its password, for `probe`'s answer. */
  readonly #where: string;
  #closed = false;
  readonly credentials: PgCredentialStore;
  readonly hostTasks: PgHostTaskStore;
  readonly directBlobs: PgBlobStore;
  readonly rateLimits: PgRateLimitStore;
  readonly schedules: PgScheduleStore;
  readonly purge: PgPurgeStore;
  readonly erase: PgEraseStore;
  readonly notifier: PgNotifier;
  /** A database store has no data folder: the vault's key and the server's secret must be given. */
  readonly dataFolder: undefined = undefined;

  /**
   * Connects to `url` (`postgres://user:password@host:5432/database?schema=name`), creates the
   * schema if needed, applies pending migrations, and listens for notifications. Throws (naming
   * the URL without its password) when the database cannot be reached or is from a newer Tapedeck.
   */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const location = parsePostgresUrl(url);
    const session: PostgresLocation =
      options.durability === undefined || options.durability === "full" ? location : { ...location, sessionOptions: "-c synchronous_commit=off" };
    // An idle connection's error needs no action: the pool drops it and the next use opens another.
    const pool = openPool(session, () => undefined);
    const leasePool = openPool(session, () => undefined, 1);
    try {
      const client = await pool.connect();
      try {
        await pgMigrate(client, location.schema);
      } finally {
        client.release();
      }
      const notifier = new PgNotifier(session, (text, values) => pool.query(text, values), options.pollMs === undefined ? {} : { pollMs: options.pollMs });
      await notifier.listen();
      return new PostgresStore(pool, leasePool, notifier, location.schema, options.reconnectMs ?? DEFAULT_RECONNECT_MS, redactedUrl(url));
    } catch (error) {
      await pool.end().catch(() => undefined);
      await leasePool.end().catch(() => undefined);
      throw new Error(
        `Tapedeck cannot open the PostgreSQL store ${JSON.stringify(redactedUrl(url))}: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  private constructor(pool: pg.Pool, leasePool: pg.Pool, notifier: PgNotifier, schema: string, reconnectMs: number, where: string) {
    this.#pool = pool;
    this.#leasePool = leasePool;
    this.#where = where;
    this.#reconnectMs = reconnectMs;
    this.#commits = new PgGroupCommit(pool, { reconnectMs });
    this.notifier = notifier;
    // node-postgres' client is a PgTransaction: its query resolves with rows and rowCount.
    this.#access = { write: (write) => this.#write((tx) => write(tx as unknown as PgTransaction)), read: (text, values) => this.#read(text, values) };
    this.credentials = new PgCredentialStore(this.#access);
    this.hostTasks = new PgHostTaskStore(this.#access, notifier);
    this.directBlobs = new PgBlobStore(this.#access);
    this.rateLimits = new PgRateLimitStore(this.#access);
    this.schedules = new PgScheduleStore(this.#access);
    this.purge = new PgPurgeStore(this.#access);
    this.erase = new PgEraseStore(this.#access);
    handles.set(this, {
      write: this.#access.write,
      read: (text, values) => this.#read(text, values),
      schema,
      migrate: async (history, list) => {
        const client = await pool.connect();
        try {
          return await pgMigrate(client, schema, list, history);
        } finally {
          client.release();
        }
      },
      removeRecordedEvent: async (tx, id) => (await tx.query("DELETE FROM run_events WHERE id = $1", [id])).rowCount === 1,
    });
  }

  putToolset(toolset: PinnedToolset, owner?: ToolsetOwner): Promise<void> {
    const body = JSON.stringify(toolset);
    return this.#write(async (tx) => {
      const inserted = await tx.query("INSERT INTO toolsets (id, body) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id", [toolset.id, body]);
      if (owner === undefined) return;
      // In the insert's transaction: a toolset saved with an owner is never seen without one. A
      // registration racing the first waits on its insert (the primary key), then reads its
      // committed owner (READ COMMITTED takes a snapshot per statement) and adds itself.
      const text = ownerText(owner);
      if (inserted.rowCount === 1) await tx.query("INSERT INTO toolset_owners (toolset_id, owner) VALUES ($1, $2) ON CONFLICT DO NOTHING", [toolset.id, text]);
      else
        await tx.query(
          "INSERT INTO toolset_owners (toolset_id, owner) SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM toolset_owners WHERE toolset_id = $1) ON CONFLICT DO NOTHING",
          [toolset.id, text],
        );
    });
  }

  async getToolsetOwners(id: string): Promise<readonly ToolsetOwner[]> {
    const rows = await this.#read<{ owner: string }>("SELECT owner FROM toolset_owners WHERE toolset_id = $1 ORDER BY owner", [id]);
    return rows.map((row) => ownerFromText(row.owner));
  }

  async getToolset(id: string): Promise<PinnedToolset | undefined> {
    const [row] = await this.#read<{ body: string }>("SELECT body FROM toolsets WHERE id = $1", [id]);
    return row === undefined ? undefined : (JSON.parse(row.body) as PinnedToolset);
  }

  putObservedShape(toolsetId: string, tool: string, shape: JsonSchema): Promise<void> {
    const body = JSON.stringify(shape);
    return this.#write(async (tx) => {
      await tx.query(
        "INSERT INTO observed_shapes (toolset_id, tool, shape) VALUES ($1, $2, $3) ON CONFLICT (toolset_id, tool) DO UPDATE SET shape = excluded.shape",
        [toolsetId, tool, body],
      );
    });
  }

  async getObservedShapes(toolsetId: string): Promise<Record<string, JsonSchema>> {
    const rows = await this.#read<{ tool: string; shape: string }>("SELECT tool, shape FROM observed_shapes WHERE toolset_id = $1", [toolsetId]);
    return Object.fromEntries(rows.map((row) => [row.tool, JSON.parse(row.shape) as JsonSchema]));
  }

  /** Rejects with `StoreConflictError` if the id exists; with an `Error` if `entries[i].index !== i`. */
  createRun(run: NewRun, entries: readonly JournalEntry[]): Promise<CreateRunResult> {
    return this.#write(async (tx): Promise<CreateRunResult> => {
      entries.forEach((entry, i) => {
        if (entry.index !== i) throw new Error(`createRun(${run.id}): entries[${i}] has index ${entry.index}; a new journal starts at 0 with no gaps`);
      });
      // Encoded before any statement: a value JSON cannot hold fails the write before it writes.
      const row = newRunRow(run, entries.length);
      const rows = entries.map((entry) => journalRow(run.id, entry));
      const inserted = await tx.query(INSERT_RUN, [
        row.id,
        row.toolset_id,
        row.status,
        row.source,
        row.js,
        row.source_map,
        row.input,
        row.output,
        row.error,
        row.labels,
        row.namespace,
        row.parent_id,
        row.created_at,
        row.updated_at,
        row.journal_length,
        row.idempotency_key,
        row.expires_at,
        row.caller_run_id,
        row.caller_seq,
      ]);
      // DO NOTHING on any unique conflict: the id, or the (namespace, idempotency key) index.
      if (inserted.rowCount === 0) {
        const first =
          run.idempotencyKey === undefined
            ? undefined
            : (
                await tx.query<{ id: string }>("SELECT id FROM runs WHERE coalesce(namespace, '') = $1 AND idempotency_key = $2", [
                  run.namespace ?? "",
                  run.idempotencyKey,
                ])
              ).rows[0];
        if (first === undefined) throw new StoreConflictError(`A run with id ${run.id} already exists.`);
        return { kind: "duplicate", runId: first.id };
      }
      await insertEntries(tx, run.id, rows);
      return { kind: "created" };
    }).then((result) => {
      if (result.kind === "created") this.#published(run.id, true);
      return result;
    });
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const [row] = await this.#read<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${RUNS} WHERE id = $1`, [id]);
    return row === undefined ? undefined : runFromRow(row);
  }

  async getRunByIdempotencyKey(key: string, namespace?: string): Promise<RunRecord | undefined> {
    const [row] = await this.#read<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${RUNS} WHERE coalesce(namespace, '') = $1 AND idempotency_key = $2`, [
      namespace ?? "",
      key,
    ]);
    return row === undefined ? undefined : runFromRow(row);
  }

  async listRuns(query: RunQuery = {}): Promise<RunRecord[]> {
    const { sql, values } = listRunsSql(query);
    return (await this.#read<RunRow>(sql, values)).map(query.includeDamaged === true ? runOrDamaged : runFromRow);
  }

  /** Rejects with `StoreConflictError` (writing nothing) if the entries do not continue the journal; with an `Error` if the run does not exist. */
  append(runId: string, entries: readonly JournalEntry[], patch?: RunPatch, epoch?: number): Promise<void> {
    const written = this.#write(async (tx) => {
      // Encoded before any statement: a value JSON cannot hold fails the append before it writes.
      const rows = entries.map((entry) => journalRow(runId, entry));
      const output = patch?.output === undefined ? null : JSON.stringify(patch.output);
      const error = patch?.error === undefined ? null : JSON.stringify(patch.error);
      const events = (patch?.events ?? []).map((event) => JSON.stringify(event));
      const waits = patch?.waits;
      const waitsText = waits === undefined || waits === null || waits.length === 0 ? null : JSON.stringify(waits);
      // The hot path (a step of a running run): one statement checks and bumps the length.
      if (patch === undefined && (await hotAppend(tx, runId, entries, rows, epoch))) return;
      const run = (
        await tx.query<{ journal_length: number; lease_epoch: number }>("SELECT journal_length, lease_epoch FROM runs WHERE id = $1 FOR UPDATE", [runId])
      ).rows[0];
      if (run === undefined) throw new Error(`append: there is no run ${runId}; create it with createRun first.`);
      if (epoch !== undefined && run.lease_epoch !== epoch) throw leaseLost(runId, epoch, run.lease_epoch);
      const length = run.journal_length;
      entries.forEach((entry, i) => {
        if (entry.index !== length + i) {
          throw new StoreConflictError(
            `append to run ${runId}: entries[${i}] has index ${entry.index} but the journal expects ${length + i}; another writer appended first.`,
          );
        }
      });
      await insertEntries(tx, runId, rows);
      for (const { id, seq } of patch?.consumeSignals ?? []) {
        // Throwing undoes the whole append: the outcome is not recorded without its signal.
        const taken = await tx.query("UPDATE signals SET consumed_seq = $1 WHERE id = $2 AND run_id = $3 AND consumed_seq IS NULL", [seq, id, runId]);
        if (taken.rowCount === 0)
          throw new StoreConflictError(`append to run ${runId}: signal ${id} was already taken by another call (or is not this run's).`);
      }
      if (events.length > 0) {
        await tx.query("INSERT INTO run_events (run_id, event, at) SELECT $1, e, $3 FROM unnest($2::text[]) WITH ORDINALITY AS t (e, n) ORDER BY n", [
          runId,
          events,
          patch!.updatedAt,
        ]);
      }
      if (patch?.wakeRun !== undefined) {
        // A child's end wakes its caller: brought forward, never pushed back; only while it is parked.
        await tx.query("UPDATE runs SET wake_at = CASE WHEN wake_at IS NULL OR wake_at > $1 THEN $1 ELSE wake_at END WHERE id = $2 AND status = 'waiting'", [
          patch.updatedAt,
          patch.wakeRun,
        ]);
      }
      // The first attempts of the calls these entries schedule: a task exists exactly when its scheduling does.
      for (const task of patch?.hostTasks ?? []) await this.hostTasks.queueInAppend(tx, task);
      // A run that ends wants none of its host calls: no worker may take one now (see RunPatch).
      if (patch?.status !== undefined && terminalStatuses.includes(patch.status)) await this.hostTasks.giveUpRun(tx, runId);
      await tx.query(UPDATE_RUN, [
        runId,
        patch?.status ?? null,
        output,
        error,
        patch?.updatedAt ?? null,
        length + entries.length,
        waits !== undefined,
        waitsText,
        waits?.filter(needsDecision).length ?? 0,
        patch?.wakeAt !== undefined,
        patch?.wakeAt ?? null,
        patch?.clearHostFaults === true,
      ]);
    });
    const told = written.then(() => this.#published(runId, patch !== undefined));
    // Polls waiting for work hear of the tasks queued (not claimed already) once they are durable.
    return patch?.hostTasks?.some((task) => task.claim === undefined) === true ? told.then(() => this.hostTasks.queued()) : told;
  }

  /** Tells the event streams of every node a run changed, once the write is durable (`run-topics.ts`). */
  #published(runId: string, changed: boolean): void {
    this.notifier.publish(runJournalTopic(runId));
    if (changed) this.notifier.publish(RUN_CHANGES_TOPIC);
  }

  async nextWakeAt(options: { readonly after?: number; readonly owner?: string } = {}): Promise<number | undefined> {
    const after = options.after ?? Number.MIN_SAFE_INTEGER;
    const [row] =
      options.owner === undefined
        ? await this.#read<{ wake_at: number | null }>(
            "SELECT min(wake_at) AS wake_at FROM runs WHERE status = 'waiting' AND wake_at IS NOT NULL AND wake_at > $1",
            [after],
          )
        : await this.#read<{ wake_at: number | null }>(
            "SELECT min(wake_at) AS wake_at FROM runs WHERE status = 'waiting' AND wake_at IS NOT NULL AND wake_at > $1 AND owner = $2",
            [after, options.owner],
          );
    return row?.wake_at ?? undefined;
  }

  putSignal(signal: NewSignal): Promise<{ id: number; duplicate: boolean }> {
    const payload = JSON.stringify(signal.payload);
    return this.#write(async (tx) => {
      const [inserted] = (
        await tx.query<{ id: number }>(
          "INSERT INTO signals (run_id, name, payload, key, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, key) WHERE key IS NOT NULL DO NOTHING RETURNING id",
          [signal.runId, signal.name, payload, signal.key ?? null, signal.at],
        )
      ).rows;
      if (inserted !== undefined) return { id: inserted.id, duplicate: false };
      const [existing] = (await tx.query<{ id: number }>("SELECT id FROM signals WHERE run_id = $1 AND key = $2", [signal.runId, signal.key ?? ""])).rows;
      if (!existing) throw new Error(`putSignal: signal ${signal.name} of run ${signal.runId} was neither written nor found by its key.`);
      return { id: existing.id, duplicate: true };
    });
  }

  async pendingSignals(runId: string, name: string): Promise<StoredSignal[]> {
    const rows = await this.#read<{ id: number; name: string; payload: string; at: number }>(
      "SELECT id, name, payload, at FROM signals WHERE run_id = $1 AND name = $2 AND consumed_seq IS NULL ORDER BY id",
      [runId, name],
    );
    return rows.map((row) => ({ id: row.id, name: row.name, payload: JSON.parse(row.payload) as JsonValue, at: row.at }));
  }

  async signalByKey(runId: string, key: string): Promise<number | undefined> {
    const [row] = await this.#read<{ id: number }>("SELECT id FROM signals WHERE run_id = $1 AND key = $2", [runId, key]);
    return row?.id;
  }

  async claimRun(runId: string, owner: string, until: number, now: number, takeOverFrom?: string): Promise<number | undefined> {
    const { claimed, waiting } = await this.#write(async (tx) => {
      // In one statement: the claimer's own lease holds at least until `until` (a claim never
      // shortens it; the lease row is locked before the run's, as everywhere), then the run's row.
      // Taking over a running run from another owner (dead, or its lease lapsed) means that owner
      // stopped under it without a clean shutdown: one host fault (SET reads the row before the update).
      // A lease given up at a clean stop (until 0, `GIVEN_UP_UNTIL`) is no fault. A new owner bumps the epoch.
      const updated = await tx.query<{ lease_epoch: number; requests: boolean }>(
        `WITH lease AS (
           INSERT INTO node_leases (holder, lease_until) VALUES ($1, $2)
           ON CONFLICT (holder) DO UPDATE SET lease_until = greatest(node_leases.lease_until, excluded.lease_until)
         )
         UPDATE runs SET
           host_faults = host_faults + (CASE WHEN status = 'running' AND owner IS NOT NULL AND owner <> $1 AND ${OWNER_LEASE} <> 0 THEN 1 ELSE 0 END),
           host_crashes = host_crashes + (CASE WHEN status = 'running' AND owner IS NOT NULL AND owner <> $1 AND ${OWNER_LEASE} <> 0 THEN 1 ELSE 0 END),
           last_fault = CASE WHEN status = 'running' AND owner IS NOT NULL AND owner <> $1 AND ${OWNER_LEASE} <> 0 THEN $5 ELSE last_fault END,
           lease_epoch = lease_epoch + (CASE WHEN owner IS NOT DISTINCT FROM $1 THEN 0 ELSE 1 END),
           owner = $1, released_at = NULL
         WHERE id = $3 AND (owner IS NULL OR owner = $1 OR owner = $6 OR ${OWNER_LEASE} < $4)
         RETURNING lease_epoch, EXISTS (SELECT 1 FROM run_requests WHERE run_id = $3) AS requests`,
        [owner, until, runId, now, PROCESS_STOPPED, takeOverFrom ?? owner],
      );
      const [row] = updated.rows;
      return { claimed: row?.lease_epoch, waiting: row?.requests === true };
    });
    // Requests left for the run's previous holder (or for none) are the new holder's now.
    if (waiting) this.notifier.publish(runRequestsTopic(owner));
    return claimed;
  }

  noteHostFault(runId: string, message: string): Promise<number> {
    return this.#write(
      async (tx) =>
        (
          await tx.query<{ host_faults: number }>("UPDATE runs SET host_faults = host_faults + 1, last_fault = $1 WHERE id = $2 RETURNING host_faults", [
            message,
            runId,
          ])
        ).rows[0]?.host_faults ?? 0,
    );
  }

  noteLeaseLost(runId: string, epoch: number): Promise<void> {
    return this.#write(async (tx) => {
      await tx.query(
        `UPDATE runs SET host_faults = host_faults - 1, host_crashes = greatest(host_crashes - 1, 0), last_fault = CASE WHEN host_faults = 1 THEN NULL ELSE last_fault END
         WHERE id = $1 AND lease_epoch > $2 AND host_faults > 0 AND host_crashes > 0 AND last_fault = $3`,
        [runId, epoch, PROCESS_STOPPED],
      );
    });
  }

  forgiveCrashes(runId: string, epoch: number): Promise<void> {
    return this.#write(async (tx) => {
      // The faults the engine threw stay counted (and the last one's text, if one was).
      await tx.query(
        `UPDATE runs SET host_faults = host_faults - host_crashes, host_crashes = 0,
           last_fault = CASE WHEN host_faults = host_crashes THEN NULL ELSE last_fault END
         WHERE id = $1 AND lease_epoch = $2 AND host_crashes > 0`,
        [runId, epoch],
      );
    });
  }

  /**
   * One statement on a connection of its own (autocommit), never in the group commit nor behind
   * the pool's queue of reads: a renewal queued behind journal batches landed seconds after it
   * was due, and a live node's runs were taken over. The deadline is counted from when the statement is sent; a lease given
   * up stays so. It locks the owner's lease row alone (no run row): it cannot deadlock with appends.
   */
  async renewLeases(owner: string, leaseMs: number): Promise<void> {
    if (this.#closed) throw new Error("This PostgresStore is closed; open it again to write.");
    await this.#leasePool.query({ name: "tapedeck_renew_lease", text: RENEW_LEASE, values: [Date.now() + leaseMs, owner] });
  }

  giveUpLeases(owner: string): Promise<void> {
    return this.#write(async (tx) => {
      await tx.query("INSERT INTO node_leases (holder, lease_until) VALUES ($1, $2) ON CONFLICT (holder) DO UPDATE SET lease_until = excluded.lease_until", [
        owner,
        GIVEN_UP_UNTIL,
      ]);
    });
  }

  releaseRuns(owner: string, runId?: string): Promise<void> {
    const now = Date.now();
    return this.#write(async (tx) => {
      // A running run released is marked so, for the takeover scan to take it again after a backoff.
      // Several rows are locked in id order, as every multi-row write does: two such writes cannot deadlock.
      const released = "owner = NULL, released_at = CASE WHEN status = 'running' THEN $2::bigint ELSE NULL END";
      if (runId === undefined)
        await tx.query(`UPDATE runs SET ${released} WHERE id IN (SELECT id FROM runs WHERE owner = $1 ORDER BY id FOR UPDATE)`, [owner, now]);
      else await tx.query(`UPDATE runs SET ${released} WHERE id = $3 AND owner = $1`, [owner, now, runId]);
    });
  }

  async putRunRequest(runId: string, request: RunRequest, at: number): Promise<void> {
    const body = JSON.stringify(request);
    const holder = await this.#write(async (tx) => {
      await tx.query("INSERT INTO run_requests (run_id, body, at) VALUES ($1, $2, $3)", [runId, body, at]);
      return (await tx.query<{ owner: string | null }>("SELECT owner FROM runs WHERE id = $1", [runId])).rows[0]?.owner ?? undefined;
    });
    if (typeof holder === "string") this.notifier.publish(runRequestsTopic(holder));
  }

  async runRequests(owner: string): Promise<PendingRunRequest[]> {
    const rows = await this.#read<{ id: number; run_id: string; body: string }>(
      "SELECT id, run_id, body FROM run_requests WHERE run_id IN (SELECT id FROM runs WHERE owner = $1) ORDER BY id",
      [owner],
    );
    return rows.map((row) => ({ id: row.id, runId: row.run_id, request: JSON.parse(row.body) as RunRequest }));
  }

  removeRunRequest(id: number): Promise<void> {
    return this.#write(async (tx) => {
      await tx.query("DELETE FROM run_requests WHERE id = $1", [id]);
    });
  }

  putWebhook(hook: WebhookBinding): Promise<void> {
    return this.#write(async (tx) => {
      await tx.query("INSERT INTO webhooks (token_hash, run_id, name, created_at) VALUES ($1, $2, $3, $4)", [
        hook.tokenHash,
        hook.runId,
        hook.name,
        hook.createdAt,
      ]);
    });
  }

  async getWebhook(tokenHash: string): Promise<WebhookBinding | undefined> {
    const [row] = await this.#read<{ run_id: string; name: string; created_at: number }>(
      "SELECT run_id, name, created_at FROM webhooks WHERE token_hash = $1",
      [tokenHash],
    );
    return row === undefined ? undefined : { tokenHash, runId: row.run_id, name: row.name, createdAt: row.created_at };
  }

  async changedRuns(after: string, limit: number): Promise<ChangedRun[] | undefined> {
    const cursor = /^(\d{1,19})\/(.*)$/s.exec(after);
    if (cursor === null) return undefined;
    // Only transactions older than every one in flight: no later commit can add a row before the cursor.
    const rows = await this.#read<RunRow & { change: string }>(
      `SELECT ${RUN_COLUMNS}, changed_xid::text AS change FROM ${RUNS}
        WHERE (changed_xid, id) > ($1::bigint, $2::text) AND changed_xid < ${SETTLED_XID} ORDER BY changed_xid, id LIMIT $3`,
      [cursor[1], cursor[2], limit],
    );
    return rows.map((row) => ({ cursor: `${row.change}/${row.id}`, run: runFromRow(row) }));
  }

  async countRuns(): Promise<RunCounts> {
    return runCounts(await this.#read<{ status: string; n: string }>("SELECT status, count(*) AS n FROM runs GROUP BY status", []));
  }

  async changesCursor(): Promise<string> {
    const [row] = await this.#read<{ settled: string }>(`SELECT ${SETTLED_XID}::text AS settled`, []);
    // Rows of the settled transaction itself (in flight, or not begun) are after it: an empty id sorts before every id.
    return `${row!.settled}/`;
  }

  async recordedEvents(limit: number): Promise<RecordedRunEvent[]> {
    const rows = await this.#read<{ id: number; event: string; at: number }>("SELECT id, event, at FROM run_events ORDER BY id LIMIT $1", [limit]);
    return rows.map((row) => ({ id: row.id, event: JSON.parse(row.event) as RunEvent, at: row.at }));
  }

  async readJournal(runId: string, from = 0, limit?: number): Promise<JournalEntry[]> {
    // LIMIT NULL is PostgreSQL for "no limit".
    const rows = await this.#read<Pick<JournalRow, "idx" | "at" | "kind" | "body">>(
      "SELECT idx, at, kind, body FROM journal WHERE run_id = $1 AND idx >= $2 ORDER BY idx LIMIT $3",
      [runId, from, limit ?? null],
    );
    return rows.map(entryFromRow);
  }

  /** One `SELECT 1` on the lease connection, not retried (see `Store.probe`). */
  async probe(): Promise<string | undefined> {
    if (this.#closed) return "the store is closed";
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`it did not answer within ${STORE_PROBE_TIMEOUT_MS / 1000} s`), STORE_PROBE_TIMEOUT_MS);
    });
    // On the lease connection, not the pool: a pool busy with this node's own reads is no outage
    // (under load its queue held a probe past its 5 s and the node refused work it could do).
    const answer = this.#leasePool.query("SELECT 1").then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    const problem = await Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
    return problem === undefined ? undefined : `the PostgreSQL store ${JSON.stringify(this.#where)} cannot be reached: ${problem}`;
  }

  /** Commits queued writes (their promises settle), then closes the pool and the notifier. Closing again does nothing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.notifier.close();
    await this.#commits.flush();
    await this.#pool.end();
    await this.#leasePool.end();
  }

  #write<T>(write: (tx: pg.ClientBase) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("This PostgresStore is closed; open it again to write."));
    return this.#commits.submit(write);
  }

  #read<R extends object>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    if (this.#closed) return Promise.reject(new Error("This PostgresStore is closed; open it again to read."));
    return readWithRetry<R>(this.#pool, this.#reconnectMs, text, values);
  }
}

/**
 * The append of a running run in one statement (one round trip): bumps the length of a journal
 * that `entries` continue, numbered in order, and inserts them; `false` (nothing written) if they
 * do not continue it.
 */
async function hotAppend(
  tx: pg.ClientBase,
  runId: string,
  entries: readonly JournalEntry[],
  rows: readonly JournalRow[],
  epoch: number | undefined,
): Promise<boolean> {
  const first = entries[0];
  if (first === undefined || entries.some((entry, i) => entry.index !== first.index + i)) return false;
  // Named: each connection parses and plans it once (every connection keeps one search_path).
  const inserted = await tx.query({
    name: "tapedeck_hot_append",
    text: HOT_APPEND,
    values: [runId, ...entryArrays(rows), first.index + entries.length, first.index, epoch ?? null],
  });
  return inserted.rowCount === entries.length;
}

/** One statement for every entry of an append. */
async function insertEntries(tx: pg.ClientBase, runId: string, rows: readonly JournalRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(INSERT_ENTRIES, [runId, ...entryArrays(rows)]);
}

/** The entries' columns as arrays, for `unnest`. */
function entryArrays(rows: readonly JournalRow[]): unknown[] {
  return [rows.map((row) => row.idx), rows.map((row) => row.kind), rows.map((row) => row.seq), rows.map((row) => row.at), rows.map((row) => row.body)];
}

/** The `listRuns` query for `query`: every filter given must hold; newest first. */
function listRunsSql(query: RunQuery): { sql: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (query.status !== undefined) where.push(`status = ANY(${param([...query.status])}::text[])`);
  if (query.namespace !== undefined) where.push(`namespace = ${param(query.namespace)}`);
  if (query.wakeBy !== undefined) where.push(`status = 'waiting' AND wake_at IS NOT NULL AND wake_at <= ${param(query.wakeBy)}`);
  if (query.needsDecision === true) where.push("decisions > 0");
  if (query.expiredBy !== undefined) {
    where.push(`expires_at IS NOT NULL AND status IN ('queued', 'running', 'waiting') AND expires_at <= ${param(query.expiredBy)}`);
  }
  if (query.owner !== undefined) where.push(`owner = ${param(query.owner)}`);
  if (query.leaseLapsedBy !== undefined) where.push(`owner IS NOT NULL AND coalesce(l.lease_until, 0) < ${param(query.leaseLapsedBy)}`);
  if (query.releasedBefore !== undefined) where.push(`owner IS NULL AND released_at IS NOT NULL AND released_at < ${param(query.releasedBefore)}`);
  // Each label by key, as a JSON path cannot name keys holding dots or quotes.
  for (const [key, value] of Object.entries(query.labels ?? {})) where.push(`(labels::jsonb ->> ${param(key)}) = ${param(value)}`);
  const limit = param(query.limit ?? DEFAULT_LIST_LIMIT);
  const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  // ord breaks ties between runs created in the same millisecond: the later insert first.
  const order = query.wakeBy !== undefined ? "wake_at, ord" : query.expiredBy !== undefined ? "expires_at, ord" : "created_at DESC, ord DESC";
  return { sql: `SELECT ${RUN_COLUMNS} FROM ${RUNS} ${filter} ORDER BY ${order} LIMIT ${limit}`, values };
}
