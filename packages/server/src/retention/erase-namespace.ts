/**
 * An end user's erasure as the server does it (`DELETE /v1/namespaces/:ns`, `tapedeck namespaces
 * erase`): the engine's (`Engine.eraseNamespace`: runs, sessions, credentials, rate-limit windows,
 * host tasks, schedules, workspace, memory), and the server's webhook outbox — the deliveries of
 * the namespace's events and to its endpoints, and those endpoints — in bounded batches, deleted
 * before the engine compacts the files so that their bytes go too. See `docs/design/retention.md`.
 *
 * End users' tokens are not stored (a token is signed, `http/auth/tokens.ts`), so there is none
 * to delete: one minted for the namespace still acts as it until it expires, in a namespace now empty.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { PURGE_BATCH_SIZE, type Engine } from "@tapedeck/engine";
import type { ErasedNamespace } from "@tapedeck/protocol/api";
import type { WebhookOutboxStore } from "../store/webhook-outbox-store.js";

export interface EraseNamespaceOptions {
  readonly cancel?: boolean;
  readonly dryRun?: boolean;
  /** Runs (and deliveries) per batch. Default `PURGE_BATCH_SIZE`. */
  readonly batchSize?: number;
}

export async function eraseNamespace(
  engine: Engine,
  outbox: WebhookOutboxStore,
  namespace: string,
  options: EraseNamespaceOptions = {},
): Promise<ErasedNamespace> {
  const size = options.batchSize ?? PURGE_BATCH_SIZE;
  if (options.dryRun === true) {
    const [erased, webhooks] = await Promise.all([engine.eraseNamespace(namespace, { dryRun: true }), outbox.countNamespace(namespace)]);
    return { ...erased, webhookDeliveries: webhooks.deliveries, webhookEndpoints: webhooks.endpoints };
  }
  let webhookDeliveries = 0;
  let webhookEndpoints = 0;
  let batches = 0;
  const erased = await engine.eraseNamespace(namespace, {
    ...(options.cancel === undefined ? {} : { cancel: options.cancel }),
    batchSize: size,
    alsoErase: async () => {
      for (;;) {
        const batch = await outbox.eraseNamespace(namespace, size);
        batches += 1;
        webhookDeliveries += batch.deliveries;
        webhookEndpoints += batch.endpoints;
        if (batch.deliveries === 0 && batch.endpoints === 0) return;
        await nextTurn();
      }
    },
  });
  return { ...erased, webhookDeliveries, webhookEndpoints, batches: erased.batches + batches };
}
