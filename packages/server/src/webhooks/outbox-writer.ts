import { randomBytes } from "node:crypto";
import type { Engine, RecordedRunEvent, Store } from "@tapedeck/engine";
import type { NewWebhookDelivery, WebhookOutboxStore } from "../store/webhook-outbox-store.js";
import { webhookEvent, webhookType } from "./webhook-event.js";
import type { WebhookEndpoints } from "./webhook-endpoints.js";

/** Recorded events fanned out per commit: bounded so one commit (and the bodies it holds) stays small under a burst. */
const EVENTS_PER_COMMIT = 50;

/**
 * Turns the run events the engine recorded (in the commits that made them happen) into outbox
 * rows: one delivery per endpoint that wants the event and whose scope holds the run. The
 * deliveries are written and the recorded events removed in one commit, then the delivery loop
 * is told.
 *
 * Invariants:
 * - At least once across crashes: an event is recorded with what it reports (the engine runs
 *   with `recordEvents`), and stays recorded until its deliveries are committed. Whatever a
 *   crash leaves recorded is fanned out when the next server opens (`drain` on start).
 * - Events are fanned out in the order they were committed, with the time they happened.
 * - One drain at a time; events arriving during a drain trigger one more pass; none after `close`.
 * - Servers sharing a store fan each event out once (`fanOut` skips events another removed).
 */
export class OutboxWriter {
  readonly #store: Store;
  readonly #outbox: WebhookOutboxStore;
  readonly #endpoints: WebhookEndpoints;
  readonly #written: () => void;
  readonly #log: (line: string) => void;
  #draining: Promise<void> | undefined;
  #again = false;
  #closed = false;
  #unsubscribe: (() => void) | undefined;

  constructor(options: {
    readonly store: Store;
    readonly outbox: WebhookOutboxStore;
    readonly endpoints: WebhookEndpoints;
    readonly written: () => void;
    readonly log: (line: string) => void;
  }) {
    this.#store = options.store;
    this.#outbox = options.outbox;
    this.#endpoints = options.endpoints;
    this.#written = options.written;
    this.#log = options.log;
  }

  /** Drains what a previous process left recorded, then drains again whenever the engine reports a run event. */
  listen(engine: Engine): void {
    this.#unsubscribe = engine.on((event) => {
      if (event.type !== "engine.error") this.drain();
    });
    this.drain();
  }

  /** Stops listening and waits for the drain in progress. What is still recorded stays for the next process. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe?.();
    await this.#draining;
  }

  /** Fans out every recorded event (now, or right after the drain in progress). */
  drain(): void {
    if (this.#closed) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#drainAll()
      .catch((error: unknown) =>
        this.#log(
          `tapedeck: recorded run events were not fanned out to webhooks (they stay recorded and go out with the next event or restart): ${error instanceof Error ? error.message : String(error)}`,
        ),
      )
      .finally(() => {
        this.#draining = undefined;
        if (this.#again) {
          this.#again = false;
          this.drain();
        }
      });
  }

  async #drainAll(): Promise<void> {
    while (!this.#closed) {
      const recorded = await this.#store.recordedEvents(EVENTS_PER_COMMIT);
      if (recorded.length === 0) return;
      // Endpoints another server created are in the store, maybe not yet here: no event may miss one.
      await this.#endpoints.refresh();
      const events = [];
      for (const event of recorded) events.push({ recorded: event.id, deliveries: await this.#deliveriesOf(event) });
      await this.#outbox.fanOut(events);
      if (events.some((event) => event.deliveries.length > 0)) this.#written();
      if (recorded.length < EVENTS_PER_COMMIT) return;
    }
  }

  /** The deliveries one recorded event owes, none when no endpoint wants it. */
  async #deliveriesOf({ event, at }: RecordedRunEvent): Promise<NewWebhookDelivery[]> {
    const type = webhookType(event);
    if (type === undefined || !this.#endpoints.wants(type)) return [];
    const run = await this.#store.getRun(event.runId);
    if (!run) return [];
    const endpoints = this.#endpoints.matching(type, run);
    if (endpoints.length === 0) return [];
    const id = `evt_${randomBytes(12).toString("base64url")}`;
    const body = JSON.stringify(webhookEvent(event, run, id, at));
    return endpoints.map((endpointId) => ({
      id: `dlv_${randomBytes(12).toString("base64url")}`,
      endpointId,
      eventId: id,
      eventType: type,
      body,
      createdAt: at,
      nextAttemptAt: at,
    }));
  }
}
