import type { DeliveryNext, WebhookDeliveryRecord, WebhookOutboxStore } from "../store/webhook-outbox-store.js";
import { describeNetError } from "@tapedeck/engine/net";
import type { ServerLogger } from "../logging/server-logger.js";
import { retryDelay, type RetrySchedule } from "./retry-schedule.js";
import { signatureHeaders } from "./signature.js";
import type { EndpointTarget } from "./webhook-endpoints.js";
import { WebhookPoster, type PostResult } from "./webhook-poster.js";

/** Deliveries sent at once: enough to keep up with busy servers, few enough to be polite to one slow receiver. */
const MAX_IN_FLIGHT = 16;

export interface DeliveryLoopOptions {
  readonly outbox: WebhookOutboxStore;
  /** Where an endpoint is and its secret; undefined when it was deleted. */
  readonly target: (endpointId: string) => EndpointTarget | undefined | Promise<EndpointTarget | undefined>;
  readonly schedule: RetrySchedule;
  /** How long one attempt may take, ms (connection, answer). */
  readonly timeoutMs: number;
  /** Failed attempts (`warn`), deliveries given up (`error`) and faults of the loop itself. */
  readonly logger: Pick<ServerLogger, "debug" | "info" | "warn" | "error">;
  readonly now?: () => number;
  /** How bodies are POSTed. Default: a `WebhookPoster` with the system resolver and `timeoutMs`. */
  readonly poster?: WebhookPoster;
  /** Told of each failed attempt (`gaveUp`: it was the last), for `/metrics`. */
  readonly failed?: (gaveUp: boolean) => void;
}

/**
 * Sends the outbox's due deliveries: POSTs each (signed, with the attempt's timestamp), records
 * the attempt, and schedules the next one (retry schedule) until a 2xx or the last attempt.
 *
 * Invariants:
 * - The store is the queue: what is due is read from it, so deliveries pending when the server
 *   stopped (or died) go out after the next start. A delivery is sent by one attempt at a time.
 * - An attempt counts once it is recorded. Stopping waits for the attempts in flight (at most
 *   their timeout) so each is recorded; an attempt cut short by a crash is sent again: a receiver
 *   may get an event twice, and deduplicates by its id.
 * - Redirects are not followed (a 3xx is a failed attempt): the URL registered is the one called.
 */
export class DeliveryLoop {
  readonly #options: DeliveryLoopOptions;
  readonly #now: () => number;
  readonly #poster: WebhookPoster;
  readonly #inFlight = new Map<string, Promise<void>>();
  #pumping: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: DeliveryLoopOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#poster = options.poster ?? new WebhookPoster({ timeoutMs: options.timeoutMs });
  }

  /** Sends what is due now (and arms a timer for what is due later). Cheap to call often. */
  kick(): void {
    if (this.#closed) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = this.#fill()
      .catch((error: unknown) => this.#options.logger.error(`webhook deliveries could not be read: ${describeNetError(error)}`))
      .finally(() => {
        this.#pumping = undefined;
        if (this.#again) {
          this.#again = false;
          this.kick();
        }
      });
  }

  /** Stops sending; resolves once the attempts in flight are recorded. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    // A read in progress may still start attempts; then every attempt started is waited for.
    await this.#pumping;
    await Promise.all(this.#inFlight.values());
    await this.#poster.close();
  }

  async #fill(): Promise<void> {
    clearTimeout(this.#timer);
    const free = MAX_IN_FLIGHT - this.#inFlight.size;
    if (free <= 0) return;
    const now = this.#now();
    const due = (await this.#options.outbox.dueDeliveries(now, free + this.#inFlight.size)).filter((d) => !this.#inFlight.has(d.id)).slice(0, free);
    if (this.#closed) return;
    for (const delivery of due) {
      const sent = this.#attempt(delivery).finally(() => {
        this.#inFlight.delete(delivery.id);
        this.kick();
      });
      this.#inFlight.set(delivery.id, sent);
    }
    if (due.length === free || this.#closed) return;
    // What is due already is in flight (its end kicks again); arm for the first that is not due yet.
    const next = await this.#options.outbox.nextDeliveryAt();
    if (next !== undefined && next > now && !this.#closed) this.#timer = setTimeout(() => this.kick(), Math.min(next - now, 2 ** 31 - 1));
  }

  async #attempt(delivery: WebhookDeliveryRecord): Promise<void> {
    const target = await this.#options.target(delivery.endpointId);
    // Deleted since (its rows go with it), or its secret is unreadable (the server secret changed): nothing to sign with.
    if (!target) return;
    const attempt = delivery.attempts.length + 1;
    const at = this.#now();
    const { statusCode, error } = await this.#post(target, delivery, at);
    const durationMs = Math.max(0, this.#now() - at);
    const delivered = statusCode !== undefined && statusCode >= 200 && statusCode < 300;
    const delay = delivered ? undefined : retryDelay(this.#options.schedule, attempt);
    const next: DeliveryNext = delivered
      ? { status: "delivered" }
      : delay === undefined
        ? { status: "failed" }
        : { status: "pending", nextAttemptAt: at + durationMs + delay };
    try {
      await this.#options.outbox.recordAttempt(
        delivery.id,
        { attempt, at, durationMs, ...(statusCode === undefined ? {} : { statusCode }), ...(error === undefined ? {} : { error }) },
        next,
      );
    } catch (recordError) {
      this.#options.logger.error(
        `webhook delivery ${delivery.id} attempt ${attempt} was made but not recorded (it will be sent again): ${describeNetError(recordError)}`,
      );
    }
    if (!delivered) {
      this.#options.failed?.(next.status === "failed");
      this.#logFailure(delivery, attempt, { statusCode, error }, next);
    } else
      this.#options.logger.debug(
        { delivery: delivery.id, endpoint: delivery.endpointId, type: delivery.eventType, attempt, status: statusCode, ms: durationMs },
        "webhook delivered",
      );
  }

  /** A failed attempt: the delivery, endpoint and event by id (an endpoint's URL may hold a secret, so it is never logged), and what happens next. */
  #logFailure(delivery: WebhookDeliveryRecord, attempt: number, result: PostResult, next: DeliveryNext): void {
    const fields = {
      delivery: delivery.id,
      endpoint: delivery.endpointId,
      event: delivery.eventId,
      type: delivery.eventType,
      attempt,
      ...(result.statusCode === undefined ? {} : { status: result.statusCode }),
      ...(result.error === undefined ? {} : { error: result.error }),
    };
    if (next.status === "pending")
      this.#options.logger.warn({ ...fields, nextAttemptAt: new Date(next.nextAttemptAt).toISOString() }, "webhook delivery attempt failed");
    else this.#options.logger.error(fields, "webhook delivery failed: no attempts left");
  }

  #post(target: EndpointTarget, delivery: WebhookDeliveryRecord, at: number): Promise<PostResult> {
    const headers = {
      "content-type": "application/json",
      "user-agent": "Tapedeck-Webhooks/1",
      ...signatureHeaders(delivery.eventId, delivery.body, target.secret, at),
    };
    return this.#poster.post(target, headers, delivery.body);
  }
}
