/**
 * A purge as the server does it (`POST /v1/runs/purge`, `tapedeck runs purge`, the retention
 * sweep): the engine's ended runs and idle sessions (`Engine.purgeRuns`), then the webhook
 * deliveries done before the same time, each in bounded batches (one commit each, the event loop
 * free between two). See `docs/design/retention.md`.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { PURGE_BATCH_SIZE, type Engine } from "@tapedeck/engine";
import type { PurgedRuns } from "@tapedeck/protocol/api";
import type { WebhookOutboxStore } from "../store/webhook-outbox-store.js";

export interface PurgeEndedOptions {
  /** What ended before this time, ms since the epoch. */
  readonly before: number;
  readonly dryRun?: boolean;
  /** Runs (and deliveries) per batch. Default `PURGE_BATCH_SIZE`. */
  readonly batchSize?: number;
  /** At most this many batches of runs, and of deliveries (a sweep's turn). Default: until none is left. */
  readonly maxBatches?: number;
}

export interface PurgeEndedResult extends PurgedRuns {
  /** Nothing of what ended before `before` is left (false: stopped at `maxBatches`). */
  readonly complete: boolean;
}

export async function purgeEnded(engine: Engine, outbox: WebhookOutboxStore, options: PurgeEndedOptions): Promise<PurgeEndedResult> {
  const { before } = options;
  const runs = await engine.purgeRuns({
    before,
    ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    ...(options.maxBatches === undefined ? {} : { maxBatches: options.maxBatches }),
  });
  const base = { before, dryRun: runs.dryRun, runs: runs.runs, sessions: runs.sessions, journalEntries: runs.journalEntries };
  if (runs.dryRun) return { ...base, deliveries: await outbox.countPurgeableDeliveries(before), batches: 0, complete: true };
  const size = options.batchSize ?? PURGE_BATCH_SIZE;
  let deliveries = 0;
  let batches = 0;
  for (;;) {
    if (options.maxBatches !== undefined && batches >= options.maxBatches) return { ...base, deliveries, batches: runs.batches + batches, complete: false };
    const deleted = await outbox.purgeDeliveries(before, size);
    if (deleted === 0) return { ...base, deliveries, batches: runs.batches + batches, complete: runs.complete };
    deliveries += deleted;
    batches += 1;
    await nextTurn();
  }
}
