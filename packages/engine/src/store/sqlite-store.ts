/**
 * The embedded store: one SQLite file (WAL mode) through better-sqlite3. The sub-stores whose
 * writes meet in the runs' rows (runs and journal, signals, leases and requests, toolsets,
 * webhook bindings) are implemented here; credentials and host tasks beside it, on the same
 * connection and group commit; the server's tables through `sqliteHandle` (`sqlite-handle.ts`).
 *
 * Invariants:
 * - Every write (toolsets, new runs, appends) goes through the group commit, so a resolved
 *   promise means committed with the configured durability, and a batch's writes share a flush.
 * - A run's `journal_length` always equals its number of journal rows; an append checks it and
 *   bumps it in the same transaction, which is what makes two writers of one run conflict.
 * - Reads see committed data only (what an awaited write promised), never a queued write.
 * - better-sqlite3 is synchronous: each statement blocks the event loop, so statements are
 *   prepared once and kept short; listing reads only the rows asked for.
 */
import Database from "better-sqlite3";
import { needsDecision, terminalStatuses, type JournalEntry, type JsonSchema, type JsonValue, type PinnedToolset, type RunEvent } from "@tapedeck/protocol";
import { createDataFolder, createPrivateFile, databaseFile } from "./data-folder.js";
import { GroupCommit } from "./group-commit.js";
import { GIVEN_UP_UNTIL, runRequestsTopic, type PendingRunRequest } from "./lease-store.js";
import { leaseLost } from "./lease-lost-error.js";
import { LocalNotifier } from "./local-notifier.js";
import { migrate } from "./migrations.js";
import { entryFromRow, journalRow, newRunRow, runFromRow, runOrDamaged } from "./sqlite-rows.js";
import type { JournalRow, RunRow } from "./sqlite-rows.js";
import { SqliteCredentialStore } from "./sqlite-credential-store.js";
import type { SqliteAccess, SqliteHandle } from "./sqlite-handle.js";
import { SqliteRateLimitStore } from "./sqlite-rate-limit-store.js";
import { SqliteScheduleStore } from "./sqlite-schedule-store.js";
import { SqliteHostTaskStore } from "./sqlite-host-task-store.js";
import { SqliteBlobStore } from "./sqlite-blob-store.js";
import { SqlitePurgeStore } from "./sqlite-purge-store.js";
import { SqliteEraseStore } from "./sqlite-erase-store.js";
import { StoreConflictError } from "./store.js";
import { ownerFromText, ownerText } from "./toolset-owner-text.js";
import type { ToolsetOwner } from "./toolset-store.js";
import { RUN_CHANGES_TOPIC, runJournalTopic } from "./run-topics.js";
import { runCounts, type RunCounts } from "./run-store.js";
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
} from "./store.js";

export interface SqliteStoreOptions {
  /** The database file (created if missing), or `":memory:"` for a private in-memory database. */
  readonly path: string;
  /** How hard a commit tries to survive a crash. Default `"full"`. */
  readonly durability?: Durability;
  /** How often the store's notifier looks for what other processes did, ms. Default `LOCAL_POLL_MS` (200). */
  readonly pollMs?: number;
}

/** The handles of open SqliteStores, for `sqliteHandle`: not a member, so the class's public face stays free of better-sqlite3's types. */
const handles = new WeakMap<object, SqliteHandle>();

/**
 * The handle of a SQLite store, for a part that keeps its own tables in the same database (the
 * server: see `sqlite-handle.ts`); undefined for any other store.
 */
export function sqliteHandle(store: object): SqliteHandle | undefined {
  return handles.get(store);
}

/** How long a write waits for another process's lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** `listRuns` without a limit: as promised by `RunQuery.limit`. */
const DEFAULT_LIST_LIMIT = 100;

/** A path SQLite opens as a file: not `:memory:`, not `""` (a temporary database), not a `file:` URI. */
function isFilePath(path: string): boolean {
  return path !== ":memory:" && path !== "" && !path.startsWith("file:");
}

const synchronousPragma = { full: "FULL", normal: "NORMAL", off: "OFF" } as const satisfies Record<Durability, string>;

/** A run's row with its owner's lease (`RunRow.lease_until`): every read of runs. */
const SELECT_RUNS = "SELECT runs.*, node_leases.lease_until FROM runs LEFT JOIN node_leases ON node_leases.holder = runs.owner";

/** The number a write that creates or changes a run gives it (migration 26): the writer is alone, so max + 1 is durable in order. */
const NEXT_CHANGE = "(SELECT coalesce(max(change_no), 0) + 1 FROM runs)";

/** The lease of a run's owner, in a statement on `runs`: an owner without a lease row counts as given up. */
const OWNER_LEASE = "coalesce((SELECT lease_until FROM node_leases WHERE holder = runs.owner), 0)";

/** The host fault counted when a run is taken over from an owner that never released it. */
const PROCESS_STOPPED = "the process executing it stopped without shutting down (it crashed or was killed)";

interface RunUpdate {
  readonly id: string;
  readonly status: string | null;
  readonly output: string | null;
  readonly error: string | null;
  readonly updated_at: number | null;
  readonly journal_length: number;
  /** 1 when `waits` (and `decisions`) are replaced; 0 keeps them. */
  readonly waits_set: number;
  readonly waits: string | null;
  readonly decisions: number;
  readonly wake_set: number;
  readonly wake_at: number | null;
  /** 1 when the run made progress: its host faults are forgotten. */
  readonly clear_faults: number;
}

interface SignalRow {
  readonly id: number;
  readonly name: string;
  readonly payload: string;
  readonly at: number;
}

type EntryRow = Pick<JournalRow, "idx" | "at" | "kind" | "body">;

export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #commits: GroupCommit;
  #closed = false;
  readonly #sql;
  readonly directBlobs: SqliteBlobStore;
  readonly credentials: SqliteCredentialStore;
  readonly hostTasks: SqliteHostTaskStore;
  readonly rateLimits: SqliteRateLimitStore;
  readonly schedules: SqliteScheduleStore;
  readonly purge: SqlitePurgeStore;
  readonly erase: SqliteEraseStore;
  readonly notifier: LocalNotifier;
  readonly dataFolder: string | undefined;

  /**
   * Opens the database of a data folder (`<dataDir>/tapedeck.db`), creating the folder (0700)
   * and the database (0600) if needed. The store's `dataFolder` is `dataDir`.
   */
  static openDataFolder(dataDir: string, options: Omit<SqliteStoreOptions, "path"> = {}): SqliteStore {
    createDataFolder(dataDir);
    return SqliteStore.#open({ path: databaseFile(dataDir), ...options }, dataDir);
  }

  /**
   * Opens (creating if needed, owner-only: 0600, and so its `-wal` and `-shm`) and migrates the
   * database. Throws if it is from a newer Tapedeck.
   */
  static open(options: SqliteStoreOptions): SqliteStore {
    return SqliteStore.#open(options, undefined);
  }

  static #open(options: SqliteStoreOptions, dataFolder: string | undefined): SqliteStore {
    // SQLite would create the file 0644 (less the umask); tool arguments and results are private.
    if (isFilePath(options.path)) createPrivateFile(options.path);
    const db = new Database(options.path);
    try {
      // busy_timeout first: switching to WAL needs a lock another process may hold.
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${synchronousPragma[options.durability ?? "full"]}`);
      migrate(db);
      return new SqliteStore(db, options, dataFolder);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(db: Database.Database, options: SqliteStoreOptions, dataFolder: string | undefined) {
    this.#db = db;
    this.#commits = new GroupCommit(db);
    this.dataFolder = dataFolder;
    this.notifier = new LocalNotifier(options.pollMs === undefined ? {} : { pollMs: options.pollMs });
    const access: SqliteAccess = { write: (write: () => void) => this.#write(write), read: <T>(read: () => T) => this.#read(read) };
    this.credentials = new SqliteCredentialStore(db, access);
    this.directBlobs = new SqliteBlobStore(db, access);
    this.hostTasks = new SqliteHostTaskStore(db, access, this.notifier);
    this.purge = new SqlitePurgeStore(db, access);
    this.erase = new SqliteEraseStore(db, access);
    // Its own IMMEDIATE transactions, outside group commits: a place is taken (durably) before the call goes on.
    this.rateLimits = new SqliteRateLimitStore(db);
    this.schedules = new SqliteScheduleStore(db, access);
    const deleteEvent = db.prepare<[number]>("DELETE FROM run_events WHERE id = ?");
    handles.set(this, {
      ...access,
      db,
      migrate: (history, list) => migrate(db, list, history),
      removeRecordedEvent: (id) => deleteEvent.run(id).changes === 1,
    });
    this.#sql = {
      putToolset: db.prepare<[string, string]>("INSERT INTO toolsets (id, body) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"),
      getToolset: db.prepare<[string], { body: string }>("SELECT body FROM toolsets WHERE id = ?"),
      putOwner: db.prepare<[string, string]>("INSERT INTO toolset_owners (toolset_id, owner) VALUES (?, ?) ON CONFLICT DO NOTHING"),
      hasOwner: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM toolset_owners WHERE toolset_id = ? LIMIT 1"),
      getOwners: db.prepare<[string], { owner: string }>("SELECT owner FROM toolset_owners WHERE toolset_id = ? ORDER BY owner"),
      putShape: db.prepare<[string, string, string]>(
        "INSERT INTO observed_shapes (toolset_id, tool, shape) VALUES (?, ?, ?) ON CONFLICT (toolset_id, tool) DO UPDATE SET shape = excluded.shape",
      ),
      getShapes: db.prepare<[string], { tool: string; shape: string }>("SELECT tool, shape FROM observed_shapes WHERE toolset_id = ?"),
      insertRun: db.prepare<[RunRow]>(
        `INSERT INTO runs (id, toolset_id, status, source, js, source_map, input, output, error, labels,
           namespace, parent_id, created_at, updated_at, journal_length, idempotency_key, expires_at, caller_run_id, caller_seq, change_no)
         VALUES (@id, @toolset_id, @status, @source, @js, @source_map, @input, @output, @error, @labels,
           @namespace, @parent_id, @created_at, @updated_at, @journal_length, @idempotency_key, @expires_at, @caller_run_id, @caller_seq, ${NEXT_CHANGE})
         ON CONFLICT DO NOTHING`,
      ),
      getRun: db.prepare<[string], RunRow>(`${SELECT_RUNS} WHERE id = ?`),
      // The expression of the unique index runs_by_idempotency_key, so the lookup uses it.
      runByKey: db.prepare<[string, string], RunRow>(`${SELECT_RUNS} WHERE coalesce(namespace, '') = ? AND idempotency_key = ?`),
      journalLength: db.prepare<[string], { journal_length: number; lease_epoch: number }>("SELECT journal_length, lease_epoch FROM runs WHERE id = ?"),
      insertEvent: db.prepare<[string, string, number]>("INSERT INTO run_events (run_id, event, at) VALUES (?, ?, ?)"),
      insertEntry: db.prepare<[string, number, string, number | null, number, string]>(
        "INSERT INTO journal (run_id, idx, kind, seq, at, body) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      // The append of a running run: checks the lease epoch and the length, and bumps it, in one statement (0 changes: a conflict).
      bumpLength: db.prepare<[number, string, number, number | null, number | null]>(
        "UPDATE runs SET journal_length = ? WHERE id = ? AND journal_length = ? AND (? IS NULL OR lease_epoch = ?)",
      ),
      // A patch field left out keeps the stored value (JSON `null` is the text 'null', not NULL).
      updateRun: db.prepare<[RunUpdate]>(
        `UPDATE runs SET status = coalesce(@status, status), output = coalesce(@output, output),
           error = coalesce(@error, error), updated_at = coalesce(@updated_at, updated_at),
           journal_length = @journal_length,
           waits = CASE WHEN @waits_set THEN @waits ELSE waits END,
           decisions = CASE WHEN @waits_set THEN @decisions ELSE decisions END,
           wake_at = CASE WHEN @wake_set THEN @wake_at ELSE wake_at END,
           host_faults = CASE WHEN @clear_faults THEN 0 ELSE host_faults END,
           host_crashes = CASE WHEN @clear_faults THEN 0 ELSE host_crashes END,
           last_fault = CASE WHEN @clear_faults THEN NULL ELSE last_fault END,
           owner = CASE WHEN @status IN ('completed', 'failed', 'cancelled') THEN NULL ELSE owner END,
           released_at = CASE WHEN @status IN ('completed', 'failed', 'cancelled') THEN NULL ELSE released_at END,
           change_no = ${NEXT_CHANGE}
         WHERE id = @id`,
      ),
      // A child's end wakes its caller: brought forward, never pushed back; only while it is parked.
      wakeRun: db.prepare<[number, number, string]>(
        "UPDATE runs SET wake_at = CASE WHEN wake_at IS NULL OR wake_at > ? THEN ? ELSE wake_at END WHERE id = ? AND status = 'waiting'",
      ),
      nextWake: db.prepare<[number], { wake_at: number | null }>(
        "SELECT min(wake_at) AS wake_at FROM runs WHERE status = 'waiting' AND wake_at IS NOT NULL AND wake_at > ?",
      ),
      nextOwnedWake: db.prepare<[number, string], { wake_at: number | null }>(
        "SELECT min(wake_at) AS wake_at FROM runs WHERE status = 'waiting' AND wake_at IS NOT NULL AND wake_at > ? AND owner = ?",
      ),
      insertSignal: db.prepare<[string, string, string, string | null, number]>(
        "INSERT INTO signals (run_id, name, payload, key, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, key) WHERE key IS NOT NULL DO NOTHING",
      ),
      signalByKey: db.prepare<[string, string], { id: number }>("SELECT id FROM signals WHERE run_id = ? AND key = ?"),
      pendingSignals: db.prepare<[string, string], SignalRow>(
        "SELECT id, name, payload, at FROM signals WHERE run_id = ? AND name = ? AND consumed_seq IS NULL ORDER BY id",
      ),
      consumeSignal: db.prepare<[number, number, string]>("UPDATE signals SET consumed_seq = ? WHERE id = ? AND run_id = ? AND consumed_seq IS NULL"),
      // The claimer's own lease holds at least until it says (a claim never shortens it).
      holdLease: db.prepare<[string, number]>(
        "INSERT INTO node_leases (holder, lease_until) VALUES (?, ?) ON CONFLICT (holder) DO UPDATE SET lease_until = max(lease_until, excluded.lease_until)",
      ),
      // Taking over a running run from another owner (dead, or its lease lapsed) means that owner
      // stopped under it without a clean shutdown: one host fault (SET reads the row before the update).
      // A lease given up at a clean stop (until 0, `GIVEN_UP_UNTIL`) is no fault. A new owner bumps the epoch.
      claimRun: db.prepare<[{ owner: string; id: string; now: number; dead: string; fault: string }], { lease_epoch: number }>(
        `UPDATE runs SET
           host_faults = host_faults + (CASE WHEN status = 'running' AND owner IS NOT NULL AND owner <> @owner AND ${OWNER_LEASE} <> 0 THEN 1 ELSE 0 END),
           host_crashes = host_crashes + (CASE WHEN status = 'running' AND owner IS NOT NULL AND owner <> @owner AND ${OWNER_LEASE} <> 0 THEN 1 ELSE 0 END),
           last_fault = CASE WHEN status = 'running' AND owner IS NOT NULL AND owner <> @owner AND ${OWNER_LEASE} <> 0 THEN @fault ELSE last_fault END,
           lease_epoch = lease_epoch + (CASE WHEN owner IS @owner THEN 0 ELSE 1 END),
           owner = @owner, released_at = NULL
         WHERE id = @id AND (owner IS NULL OR owner = @owner OR owner = @dead OR ${OWNER_LEASE} < @now)
         RETURNING lease_epoch`,
      ),
      forgiveTakeover: db.prepare<[string, number, string]>(
        `UPDATE runs SET host_faults = host_faults - 1, host_crashes = max(host_crashes - 1, 0), last_fault = CASE WHEN host_faults = 1 THEN NULL ELSE last_fault END
         WHERE id = ? AND lease_epoch > ? AND host_faults > 0 AND host_crashes > 0 AND last_fault = ?`,
      ),
      // The faults the engine threw stay counted (and the last one's text, if one was).
      forgiveCrashes: db.prepare<[string, number]>(
        `UPDATE runs SET host_faults = host_faults - host_crashes, host_crashes = 0,
           last_fault = CASE WHEN host_faults = host_crashes THEN NULL ELSE last_fault END
         WHERE id = ? AND lease_epoch = ? AND host_crashes > 0`,
      ),
      noteHostFault: db.prepare<[string, string], { host_faults: number }>(
        "UPDATE runs SET host_faults = host_faults + 1, last_fault = ? WHERE id = ? RETURNING host_faults",
      ),
      // A lease given up (0) stays given up: a renewal sent before the give-up cannot revive it.
      renewLeases: db.prepare<[number, string]>("UPDATE node_leases SET lease_until = ? WHERE holder = ? AND lease_until <> 0"),
      giveUpLeases: db.prepare<[string, number]>(
        "INSERT INTO node_leases (holder, lease_until) VALUES (?, ?) ON CONFLICT (holder) DO UPDATE SET lease_until = excluded.lease_until",
      ),
      // A running run released is marked so, for the takeover scan to take it again after a backoff.
      releaseRun: db.prepare<[number, string, string]>(
        "UPDATE runs SET owner = NULL, released_at = CASE WHEN status = 'running' THEN ? ELSE NULL END WHERE id = ? AND owner = ?",
      ),
      releaseAll: db.prepare<[number, string]>("UPDATE runs SET owner = NULL, released_at = CASE WHEN status = 'running' THEN ? ELSE NULL END WHERE owner = ?"),
      putRequest: db.prepare<[string, string, number]>("INSERT INTO run_requests (run_id, body, at) VALUES (?, ?, ?)"),
      owner: db.prepare<[string], { owner: string | null }>("SELECT owner FROM runs WHERE id = ?"),
      hasRequests: db.prepare<[string], { found: number }>("SELECT 1 AS found FROM run_requests WHERE run_id = ? LIMIT 1"),
      runRequests: db.prepare<[string], { id: number; run_id: string; body: string }>(
        "SELECT id, run_id, body FROM run_requests WHERE run_id IN (SELECT id FROM runs WHERE owner = ?) ORDER BY id",
      ),
      removeRequest: db.prepare<[number]>("DELETE FROM run_requests WHERE id = ?"),
      putWebhook: db.prepare<[string, string, string, number]>("INSERT INTO webhooks (token_hash, run_id, name, created_at) VALUES (?, ?, ?, ?)"),
      getWebhook: db.prepare<[string], { run_id: string; name: string; created_at: number }>(
        "SELECT run_id, name, created_at FROM webhooks WHERE token_hash = ?",
      ),
      recordedEvents: db.prepare<[number], { id: number; event: string; at: number }>("SELECT id, event, at FROM run_events ORDER BY id LIMIT ?"),
      changedRuns: db.prepare<[number, number], RunRow & { change_no: number }>(
        `${SELECT_RUNS} WHERE change_no IS NOT NULL AND change_no > ? ORDER BY change_no LIMIT ?`,
      ),
      lastChange: db.prepare<[], { n: number }>("SELECT coalesce(max(change_no), 0) AS n FROM runs"),
      countRuns: db.prepare<[], { status: string; n: number }>("SELECT status, count(*) AS n FROM runs GROUP BY status"),
      // LIMIT -1 is SQLite for "no limit".
      readJournal: db.prepare<[string, number, number], EntryRow>("SELECT idx, at, kind, body FROM journal WHERE run_id = ? AND idx >= ? ORDER BY idx LIMIT ?"),
    };
  }

  putToolset(toolset: PinnedToolset, owner?: ToolsetOwner): Promise<void> {
    return this.#write(() => {
      const inserted = this.#sql.putToolset.run(toolset.id, JSON.stringify(toolset)).changes === 1;
      // In the same transaction as the insert: a toolset saved with an owner is never seen without one.
      if (owner !== undefined && (inserted || this.#sql.hasOwner.get(toolset.id) !== undefined)) this.#sql.putOwner.run(toolset.id, ownerText(owner));
    });
  }

  getToolsetOwners(id: string): Promise<readonly ToolsetOwner[]> {
    return this.#read(() => this.#sql.getOwners.all(id).map((row) => ownerFromText(row.owner)));
  }

  getToolset(id: string): Promise<PinnedToolset | undefined> {
    return this.#read(() => {
      const row = this.#sql.getToolset.get(id);
      return row === undefined ? undefined : (JSON.parse(row.body) as PinnedToolset);
    });
  }

  putObservedShape(toolsetId: string, tool: string, shape: JsonSchema): Promise<void> {
    return this.#write(() => {
      this.#sql.putShape.run(toolsetId, tool, JSON.stringify(shape));
    });
  }

  getObservedShapes(toolsetId: string): Promise<Record<string, JsonSchema>> {
    return this.#read(() => Object.fromEntries(this.#sql.getShapes.all(toolsetId).map((row) => [row.tool, JSON.parse(row.shape) as JsonSchema])));
  }

  /** Rejects with `StoreConflictError` if the id exists; with an `Error` if `entries[i].index !== i`. */
  createRun(run: NewRun, entries: readonly JournalEntry[]): Promise<CreateRunResult> {
    let result: CreateRunResult = { kind: "created" };
    return this.#write(() => {
      entries.forEach((entry, i) => {
        if (entry.index !== i) throw new Error(`createRun(${run.id}): entries[${i}] has index ${entry.index}; a new journal starts at 0 with no gaps`);
      });
      // DO NOTHING on any unique conflict: the id, or the (namespace, idempotency key) index.
      if (this.#sql.insertRun.run(newRunRow(run, entries.length)).changes === 0) {
        const first = run.idempotencyKey === undefined ? undefined : this.#sql.runByKey.get(run.namespace ?? "", run.idempotencyKey);
        if (first === undefined) throw new StoreConflictError(`A run with id ${run.id} already exists.`);
        result = { kind: "duplicate", runId: first.id };
        return;
      }
      for (const entry of entries) this.#insertEntry(run.id, entry);
    }).then(() => {
      if (result.kind === "created") this.#published(run.id, true);
      return result;
    });
  }

  /** Tells the event streams a run changed, once the write is durable (`run-topics.ts`). */
  #published(runId: string, changed: boolean): void {
    this.notifier.publish(runJournalTopic(runId));
    if (changed) this.notifier.publish(RUN_CHANGES_TOPIC);
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return this.#read(() => {
      const row = this.#sql.getRun.get(id);
      return row === undefined ? undefined : runFromRow(row);
    });
  }

  getRunByIdempotencyKey(key: string, namespace?: string): Promise<RunRecord | undefined> {
    return this.#read(() => {
      const row = this.#sql.runByKey.get(namespace ?? "", key);
      return row === undefined ? undefined : runFromRow(row);
    });
  }

  listRuns(query: RunQuery = {}): Promise<RunRecord[]> {
    return this.#read(() => {
      const { sql, params } = listRunsSql(query);
      return this.#db
        .prepare<unknown[], RunRow>(sql)
        .all(...params)
        .map(query.includeDamaged === true ? runOrDamaged : runFromRow);
    });
  }

  /** Rejects with `StoreConflictError` (writing nothing) if the entries do not continue the journal; with an `Error` if the run does not exist. */
  append(runId: string, entries: readonly JournalEntry[], patch?: RunPatch, epoch?: number): Promise<void> {
    const written = this.#write(() => {
      // The hot path (a step of a running run): one statement checks the epoch and the length, and bumps it.
      if (patch === undefined && this.#bumpLength(runId, entries, epoch)) {
        for (const entry of entries) this.#insertEntry(runId, entry);
        return;
      }
      const run = this.#sql.journalLength.get(runId);
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
      for (const entry of entries) this.#insertEntry(runId, entry);
      for (const { id, seq } of patch?.consumeSignals ?? []) {
        // Throwing rolls back the whole batch: the outcome is not recorded without its signal.
        if (this.#sql.consumeSignal.run(seq, id, runId).changes === 0) {
          throw new StoreConflictError(`append to run ${runId}: signal ${id} was already taken by another call (or is not this run's).`);
        }
      }
      for (const event of patch?.events ?? []) this.#sql.insertEvent.run(runId, JSON.stringify(event), patch!.updatedAt);
      // The first attempts of the calls these entries schedule: a task exists exactly when its scheduling does.
      for (const task of patch?.hostTasks ?? []) this.hostTasks.queueInAppend(task);
      if (patch?.wakeRun !== undefined) this.#sql.wakeRun.run(patch.updatedAt, patch.updatedAt, patch.wakeRun);
      // A run that ends wants none of its host calls: no worker may take one now (see RunPatch).
      if (patch?.status !== undefined && terminalStatuses.includes(patch.status)) this.hostTasks.giveUpRun(runId);
      const waits = patch?.waits;
      this.#sql.updateRun.run({
        id: runId,
        status: patch?.status ?? null,
        output: patch?.output === undefined ? null : JSON.stringify(patch.output),
        error: patch?.error === undefined ? null : JSON.stringify(patch.error),
        updated_at: patch?.updatedAt ?? null,
        journal_length: length + entries.length,
        waits_set: waits === undefined ? 0 : 1,
        waits: waits === undefined || waits === null || waits.length === 0 ? null : JSON.stringify(waits),
        decisions: waits?.filter(needsDecision).length ?? 0,
        wake_set: patch?.wakeAt === undefined ? 0 : 1,
        wake_at: patch?.wakeAt ?? null,
        clear_faults: patch?.clearHostFaults === true ? 1 : 0,
      });
    });
    const told = written.then(() => this.#published(runId, patch !== undefined));
    // Polls waiting for work hear of the tasks queued (not claimed already) once they are durable.
    return patch?.hostTasks?.some((task) => task.claim === undefined) === true ? told.then(() => this.hostTasks.queued()) : told;
  }

  nextWakeAt(options: { readonly after?: number; readonly owner?: string } = {}): Promise<number | undefined> {
    const after = options.after ?? Number.MIN_SAFE_INTEGER;
    return this.#read(
      () => (options.owner === undefined ? this.#sql.nextWake.get(after) : this.#sql.nextOwnedWake.get(after, options.owner))?.wake_at ?? undefined,
    );
  }

  putSignal(signal: NewSignal): Promise<{ id: number; duplicate: boolean }> {
    let result: { id: number; duplicate: boolean } | undefined;
    return this.#write(() => {
      const inserted = this.#sql.insertSignal.run(signal.runId, signal.name, JSON.stringify(signal.payload), signal.key ?? null, signal.at);
      if (inserted.changes === 1) {
        result = { id: Number(inserted.lastInsertRowid), duplicate: false };
        return;
      }
      const existing = this.#sql.signalByKey.get(signal.runId, signal.key ?? "");
      if (!existing) throw new Error(`putSignal: signal ${signal.name} of run ${signal.runId} was neither written nor found by its key.`);
      result = { id: existing.id, duplicate: true };
    }).then(() => result!);
  }

  pendingSignals(runId: string, name: string): Promise<StoredSignal[]> {
    return this.#read(() =>
      this.#sql.pendingSignals.all(runId, name).map((row) => ({ id: row.id, name: row.name, payload: JSON.parse(row.payload) as JsonValue, at: row.at })),
    );
  }

  signalByKey(runId: string, key: string): Promise<number | undefined> {
    return this.#read(() => this.#sql.signalByKey.get(runId, key)?.id);
  }

  claimRun(runId: string, owner: string, until: number, now: number, takeOverFrom?: string): Promise<number | undefined> {
    let claimed: number | undefined;
    let waiting = false;
    return this.#write(() => {
      this.#sql.holdLease.run(owner, until);
      claimed = this.#sql.claimRun.get({ owner, id: runId, now, dead: takeOverFrom ?? owner, fault: PROCESS_STOPPED })?.lease_epoch;
      waiting = claimed !== undefined && this.#sql.hasRequests.get(runId) !== undefined;
    }).then(() => {
      // Requests left for the run's previous holder (or for none) are the new holder's now.
      if (waiting) this.notifier.publish(runRequestsTopic(owner));
      return claimed;
    });
  }

  noteHostFault(runId: string, message: string): Promise<number> {
    let count = 0;
    return this.#write(() => {
      count = this.#sql.noteHostFault.get(message, runId)?.host_faults ?? 0;
    }).then(() => count);
  }

  noteLeaseLost(runId: string, epoch: number): Promise<void> {
    return this.#write(() => {
      this.#sql.forgiveTakeover.run(runId, epoch, PROCESS_STOPPED);
    });
  }

  forgiveCrashes(runId: string, epoch: number): Promise<void> {
    return this.#write(() => {
      this.#sql.forgiveCrashes.run(runId, epoch);
    });
  }

  renewLeases(owner: string, leaseMs: number): Promise<void> {
    return this.#write(() => {
      // Counted from now, as the write runs (its commit is this turn's), not from when it was asked for.
      this.#sql.renewLeases.run(Date.now() + leaseMs, owner);
    });
  }

  giveUpLeases(owner: string): Promise<void> {
    return this.#write(() => {
      this.#sql.giveUpLeases.run(owner, GIVEN_UP_UNTIL);
    });
  }

  releaseRuns(owner: string, runId?: string): Promise<void> {
    return this.#write(() => {
      if (runId === undefined) this.#sql.releaseAll.run(Date.now(), owner);
      else this.#sql.releaseRun.run(Date.now(), runId, owner);
    });
  }

  putRunRequest(runId: string, request: RunRequest, at: number): Promise<void> {
    let holder: string | null | undefined;
    return this.#write(() => {
      this.#sql.putRequest.run(runId, JSON.stringify(request), at);
      holder = this.#sql.owner.get(runId)?.owner;
    }).then(() => {
      if (typeof holder === "string") this.notifier.publish(runRequestsTopic(holder));
    });
  }

  runRequests(owner: string): Promise<PendingRunRequest[]> {
    return this.#read(() => this.#sql.runRequests.all(owner).map((row) => ({ id: row.id, runId: row.run_id, request: JSON.parse(row.body) as RunRequest })));
  }

  removeRunRequest(id: number): Promise<void> {
    return this.#write(() => {
      this.#sql.removeRequest.run(id);
    });
  }

  putWebhook(hook: WebhookBinding): Promise<void> {
    return this.#write(() => {
      this.#sql.putWebhook.run(hook.tokenHash, hook.runId, hook.name, hook.createdAt);
    });
  }

  getWebhook(tokenHash: string): Promise<WebhookBinding | undefined> {
    return this.#read(() => {
      const row = this.#sql.getWebhook.get(tokenHash);
      return row === undefined ? undefined : { tokenHash, runId: row.run_id, name: row.name, createdAt: row.created_at };
    });
  }

  changedRuns(after: string, limit: number): Promise<ChangedRun[] | undefined> {
    if (!/^\d{1,15}$/.test(after)) return Promise.resolve(undefined);
    return this.#read(() => this.#sql.changedRuns.all(Number(after), limit).map((row) => ({ cursor: String(row.change_no), run: runFromRow(row) })));
  }

  countRuns(): Promise<RunCounts> {
    return this.#read(() => runCounts(this.#sql.countRuns.all()));
  }

  changesCursor(): Promise<string> {
    return this.#read(() => String(this.#sql.lastChange.get()?.n ?? 0));
  }

  recordedEvents(limit: number): Promise<RecordedRunEvent[]> {
    return this.#read(() => this.#sql.recordedEvents.all(limit).map((row) => ({ id: row.id, event: JSON.parse(row.event) as RunEvent, at: row.at })));
  }

  readJournal(runId: string, from = 0, limit?: number): Promise<JournalEntry[]> {
    return this.#read(() => this.#sql.readJournal.all(runId, from, limit ?? -1).map(entryFromRow));
  }

  /** Commits queued writes (their promises settle), then closes. Closing again does nothing. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.notifier.close();
    return this.#read(() => {
      this.#commits.flush();
      this.#db.close();
    });
  }

  /** Bumps the length of a journal that `entries` continue, numbered in order; `false` (nothing written) if they do not. */
  #bumpLength(runId: string, entries: readonly JournalEntry[], epoch: number | undefined): boolean {
    const first = entries[0];
    if (first === undefined || entries.some((entry, i) => entry.index !== first.index + i)) return false;
    return this.#sql.bumpLength.run(first.index + entries.length, runId, first.index, epoch ?? null, epoch ?? null).changes === 1;
  }

  #insertEntry(runId: string, entry: JournalEntry): void {
    const row = journalRow(runId, entry);
    this.#sql.insertEntry.run(row.run_id, row.idx, row.kind, row.seq, row.at, row.body);
  }

  #write(write: () => void): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("This SqliteStore is closed; open it again to write."));
    return this.#commits.submit(write);
  }

  /** Runs `read` now, turning a throw into a rejection. */
  /** A read of the database file (see `Store.probe`): an embedded database answers unless its file went away or is damaged. */
  probe(): Promise<string | undefined> {
    return this.#read(() => this.#db.prepare("SELECT 1").get()).then(
      () => undefined,
      (error: unknown) => `the SQLite store cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }

  #read<T>(read: () => T): Promise<T> {
    return new Promise((resolve) => {
      if (!this.#db.open) throw new Error("This SqliteStore is closed; open it again to read.");
      resolve(read());
    });
  }
}

/** The `listRuns` query for `query`: every filter given must hold; newest first. */
function listRunsSql(query: RunQuery): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.status !== undefined) {
    where.push(`status IN (${query.status.map(() => "?").join(", ")})`);
    params.push(...query.status);
  }
  if (query.namespace !== undefined) {
    where.push("namespace = ?");
    params.push(query.namespace);
  }
  if (query.wakeBy !== undefined) {
    where.push("status = 'waiting' AND wake_at IS NOT NULL AND wake_at <= ?");
    params.push(query.wakeBy);
  }
  if (query.needsDecision === true) where.push("decisions > 0");
  if (query.expiredBy !== undefined) {
    // Searched in runs_by_expiry (status, expires_at): only the expired runs are read.
    where.push("expires_at IS NOT NULL AND status IN ('queued', 'running', 'waiting') AND expires_at <= ?");
    params.push(query.expiredBy);
  }
  if (query.owner !== undefined) {
    where.push("owner = ?");
    params.push(query.owner);
  }
  if (query.leaseLapsedBy !== undefined) {
    where.push("owner IS NOT NULL AND coalesce(node_leases.lease_until, 0) < ?");
    params.push(query.leaseLapsedBy);
  }
  if (query.releasedBefore !== undefined) {
    where.push("owner IS NULL AND released_at IS NOT NULL AND released_at < ?");
    params.push(query.releasedBefore);
  }
  // json_each rather than a JSON path: label keys may hold dots or quotes.
  for (const [key, value] of Object.entries(query.labels ?? {})) {
    where.push("EXISTS (SELECT 1 FROM json_each(runs.labels) WHERE key = ? AND value = ?)");
    params.push(key, value);
  }
  params.push(query.limit ?? DEFAULT_LIST_LIMIT);
  const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  // rowid breaks ties between runs created in the same millisecond: the later insert first.
  const order =
    query.wakeBy !== undefined ? "wake_at, runs.rowid" : query.expiredBy !== undefined ? "expires_at, runs.rowid" : "created_at DESC, runs.rowid DESC";
  return { sql: `${SELECT_RUNS} ${filter} ORDER BY ${order} LIMIT ?`, params };
}
