/**
 * Purging ended runs (`Engine.purgeRuns`): what retention's sweep and `tapedeck runs purge` do.
 * The store deletes one bounded batch per commit (`store/purge-store.ts`); between two batches
 * the event loop runs, so calls and commits of live runs interleave with a long purge instead of
 * waiting behind it. See `docs/design/retention.md`.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { addPurgeCounts, NO_PURGE, type PurgeCounts, type PurgeStore } from "../store/purge-store.js";

/**
 * Runs per batch: one commit. Large enough that a sweep deletes thousands of runs a second, small
 * enough that one commit (a few thousand journal rows) holds SQLite's write lock for milliseconds.
 */
export const PURGE_BATCH_SIZE = 200;

export interface PurgeOptions {
  /** Runs that ended before this time (ms since the epoch), and direct sessions unused since before it. */
  readonly before: number;
  /** Only runs and sessions of this namespace. Default: every namespace (and none). */
  readonly namespace?: string;
  /** Count what would be deleted, delete nothing. Default false. */
  readonly dryRun?: boolean;
  /** Runs per batch (one commit each). Default `PURGE_BATCH_SIZE`. */
  readonly batchSize?: number;
  /** Stop after this many batches (a sweep's turn); `complete` then says whether any was left. Default: until none is left. */
  readonly maxBatches?: number;
}

/** What a purge deleted (a dry run: would delete). */
export interface PurgeResult extends PurgeCounts {
  readonly dryRun: boolean;
  /** Batches (commits) it took; 0 for a dry run. */
  readonly batches: number;
  /** Nothing of the selection is left (false: stopped at `maxBatches`). */
  readonly complete: boolean;
}

export async function purgeRuns(store: PurgeStore, options: PurgeOptions): Promise<PurgeResult> {
  const selection = { endedBefore: options.before, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) };
  if (options.dryRun === true) return { ...(await store.countPurgeable(selection)), dryRun: true, batches: 0, complete: true };
  const size = options.batchSize ?? PURGE_BATCH_SIZE;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`purgeRuns: batchSize must be a positive integer, got ${size}`);
  let total = NO_PURGE;
  let batches = 0;
  for (;;) {
    if (options.maxBatches !== undefined && batches >= options.maxBatches) return { ...total, dryRun: false, batches, complete: false };
    const batch = await store.purgeBatch(selection, size);
    const deleted = batch.runs + batch.sessions;
    if (deleted === 0) return { ...total, dryRun: false, batches, complete: true };
    total = addPurgeCounts(total, batch);
    batches += 1;
    await nextTurn();
  }
}
