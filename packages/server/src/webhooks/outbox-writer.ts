import { randomBytes } from "node:crypto";
import type { Engine, EngineEvent, Store } from "@tapedeck/engine";
import { webhookEvent, webhookType } from "./webhook-event.js";
import type { WebhookEndpoints } from "./webhook-endpoints.js";

/**
 * Turns engine events into outbox rows: one delivery per endpoint that wants the event and whose
 * scope holds the run, all of one event in one commit, then tells the delivery loop.
 *
 * Invariants:
 * - Events are written in the order the engine emitted them (one chain), each with the time it
 *   happened, not the time it was written.
 * - Once its row is committed, an event is delivered at least once, across restarts. The row is
 *   written just after the engine's own commit of what happened: a crash in between loses the
 *   event (closing that gap needs the engine to write the outbox in its own commit).
 */
export class OutboxWriter {
  readonly #store: Store;
  readonly #endpoints: WebhookEndpoints;
  readonly #written: () => void;
  readonly #log: (line: string) => void;
  readonly #now: () => number;
  #chain: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | undefined;

  constructor(options: { readonly store: Store; readonly endpoints: WebhookEndpoints; readonly written: () => void; readonly log: (line: string) => void; readonly now?: () => number }) {
    this.#store = options.store;
    this.#endpoints = options.endpoints;
    this.#written = options.written;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  listen(engine: Engine): void {
    this.#unsubscribe = engine.on((event) => this.#enqueue(event));
  }

  /** Stops listening and waits for the events already heard to be written. */
  async close(): Promise<void> {
    this.#unsubscribe?.();
    await this.#chain;
  }

  #enqueue(event: EngineEvent): void {
    const type = webhookType(event);
    if (type === undefined || event.type === "engine.error" || !this.#endpoints.wants(type)) return;
    const at = this.#now();
    this.#chain = this.#chain
      .then(async () => {
        const run = await this.#store.getRun(event.runId);
        if (!run) return;
        const endpoints = this.#endpoints.matching(type, run);
        if (endpoints.length === 0) return;
        const id = `evt_${randomBytes(12).toString("base64url")}`;
        const body = JSON.stringify(webhookEvent(event, run, id, at));
        await this.#store.webhookOutbox.putDeliveries(
          endpoints.map((endpointId) => ({ id: `dlv_${randomBytes(12).toString("base64url")}`, endpointId, eventId: id, eventType: type, body, createdAt: at, nextAttemptAt: at })),
        );
        this.#written();
      })
      .catch((error: unknown) => this.#log(`tapedeck: webhook event ${type} of run ${event.runId} was not written to the outbox: ${error instanceof Error ? error.message : String(error)}`));
  }
}
