/**
 * Erasing an end user (`Engine.eraseNamespace`): every run and direct session of a namespace with
 * everything keyed by them, its namespace credentials, rate-limit windows, host tasks and
 * schedules (`store/erase-store.ts`), and what the library keeps of it (workspace files, memory
 * documents); then the store's and the library's SQLite files are compacted so that the deleted
 * bytes are in none of the data folder's files. See `docs/design/retention.md`.
 *
 * Invariants:
 * - A run of the namespace that has not ended is never deleted under its executor: without
 *   `cancel` the erasure refuses (deleting nothing) and names those runs; with it they are
 *   cancelled first. A run another live process holds is cancelled there, and the erasure asks to
 *   be repeated once it has ended rather than delete it under that process.
 * - One store batch is one commit of at most `batchSize` runs (`PURGE_BATCH_SIZE`); the event loop
 *   runs between two, as for a purge.
 * - A dry run deletes and cancels nothing: it counts every run of the namespace (the active ones
 *   included, which `cancel` would take) and names the active ones.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { EngineError } from "../errors.js";
import { addEraseCounts, NO_ERASURE, type ActiveRun, type EraseCounts, type EraseStore } from "../store/erase-store.js";
import { PURGE_BATCH_SIZE } from "./purge-runs.js";

export interface EraseOptions {
  /** Cancel the namespace's runs that have not ended (and let go of its live sessions) first. Default false: refuse while any exists. */
  readonly cancel?: boolean;
  /** Count what would be deleted, delete and cancel nothing. Default false. */
  readonly dryRun?: boolean;
  /** Runs (or rows) per batch, one commit each. Default `PURGE_BATCH_SIZE`. */
  readonly batchSize?: number;
  /**
   * What a part sharing the store deletes of the namespace besides (the server: its webhook
   * outbox), called once the engine's rows are deleted and before the files are compacted, so
   * that its bytes go with the compaction too. Not called for a dry run or a refusal.
   */
  readonly alsoErase?: () => Promise<void>;
}

/** What an erasure deleted (a dry run: would delete). */
export interface EraseResult extends EraseCounts {
  readonly namespace: string;
  readonly dryRun: boolean;
  /** Memory documents (with their chunks and index). */
  readonly memoryDocuments: number;
  /** Files of its library workspace. */
  readonly workspaceFiles: number;
  /** Runs it cancelled first (`cancel`); for a dry run, the runs `cancel` would cancel. */
  readonly cancelled: readonly string[];
  /** Store batches (commits) it took; 0 for a dry run. */
  readonly batches: number;
  /**
   * The deleted rows' bytes are gone from every SQLite file (the store's database, the memory
   * database, their WALs). False on PostgreSQL (its VACUUM and WAL recycling remove them), or when
   * a reader of another process kept a WAL from being truncated (the next checkpoint does it).
   */
  readonly compacted: boolean;
}

/** What the erasure needs of the engine. */
export interface EraseHost {
  readonly store: EraseStore;
  /** Cancels a run (`Engine.cancel`). */
  cancel(runId: string, reason: string): Promise<unknown>;
  /** Lets go of this engine's live sessions of the namespace (`DirectSessionHost.releaseNamespace`). */
  releaseSessions(namespace: string, force: boolean): Promise<void>;
  /** Counts what the library keeps of the namespace. */
  countLibrary(namespace: string): Promise<{ readonly memoryDocuments: number; readonly workspaceFiles: number }>;
  /** Deletes what the library keeps of the namespace. */
  eraseLibrary(namespace: string): Promise<{ readonly memoryDocuments: number; readonly workspaceFiles: number; readonly compacted: boolean }>;
}

/** Active runs named in a refusal, at most. */
const NAMED = 20;
/** Active runs cancelled per round: an end user's runs are few; a round reads them again. */
const CANCEL_ROUND = 100;

export async function eraseNamespace(host: EraseHost, namespace: string, options: EraseOptions = {}): Promise<EraseResult> {
  if (typeof namespace !== "string" || namespace.length === 0)
    throw new EngineError("invalid_request", "eraseNamespace: name the namespace to erase (a non-empty string).");
  const size = options.batchSize ?? PURGE_BATCH_SIZE;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`eraseNamespace: batchSize must be a positive integer, got ${size}`);
  const cancel = options.cancel === true;
  if (options.dryRun === true) {
    const [counts, active, library] = await Promise.all([
      host.store.countErasable(namespace),
      host.store.activeRuns(namespace, NAMED),
      host.countLibrary(namespace),
    ]);
    return { namespace, dryRun: true, ...counts, ...library, cancelled: active.map((run) => run.id), batches: 0, compacted: false };
  }
  await host.releaseSessions(namespace, cancel);
  const cancelled: string[] = [];
  let active = await host.store.activeRuns(namespace, cancel ? CANCEL_ROUND : NAMED);
  if (active.length > 0 && !cancel) throw refusal(namespace, active);
  while (active.length > 0 && cancel) {
    const fresh = active.filter((run) => !cancelled.includes(run.id));
    // A run cancelled here that is still active is another process's to end.
    if (fresh.length === 0) throw heldElsewhere(namespace, active);
    for (const run of fresh) {
      await host.cancel(run.id, `its namespace (end user) ${JSON.stringify(namespace)} is being erased`);
      cancelled.push(run.id);
    }
    active = await host.store.activeRuns(namespace, CANCEL_ROUND);
  }
  let counts: EraseCounts = NO_ERASURE;
  let batches = 0;
  for (const batch of [(limit: number) => host.store.eraseRunsBatch(namespace, limit), (limit: number) => host.store.eraseRestBatch(namespace, limit)]) {
    for (;;) {
      const deleted = await batch(size);
      batches += 1;
      counts = addEraseCounts(counts, deleted);
      if (Object.values(deleted).every((n) => n === 0)) break;
      await nextTurn();
    }
  }
  // A run started in the namespace while the erasure went on is left, and said.
  const late = await host.store.activeRuns(namespace, NAMED);
  await options.alsoErase?.();
  const library = await host.eraseLibrary(namespace);
  const compacted = (await host.store.compact()) && library.compacted;
  if (late.length > 0) {
    throw new EngineError(
      "conflict",
      `The namespace ${JSON.stringify(namespace)} was erased but for runs started during the erasure (${late.map((run) => run.id).join(", ")}): erase it again (with cancel).`,
    );
  }
  return {
    namespace,
    dryRun: false,
    ...counts,
    memoryDocuments: library.memoryDocuments,
    workspaceFiles: library.workspaceFiles,
    cancelled,
    batches,
    compacted,
  };
}

function refusal(namespace: string, active: readonly ActiveRun[]): EngineError {
  const named = active.map((run) => `${run.id} (${run.status}${run.owner === undefined ? "" : `, held by ${run.owner}`})`).join(", ");
  return new EngineError(
    "conflict",
    `The namespace ${JSON.stringify(namespace)} has runs that have not ended: ${named}${active.length >= NAMED ? " and more" : ""}. Nothing was erased: pass cancel to cancel them first, or wait until they end.`,
  );
}

function heldElsewhere(namespace: string, active: readonly ActiveRun[]): EngineError {
  return new EngineError(
    "conflict",
    `The namespace ${JSON.stringify(namespace)} has runs held by another live process (${active.map((run) => `${run.id}${run.owner === undefined ? "" : ` by ${run.owner}`}`).join(", ")}): they were asked to cancel there. Nothing was erased yet: erase again once they have ended.`,
  );
}
