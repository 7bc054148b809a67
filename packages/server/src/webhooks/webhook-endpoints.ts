import { randomBytes } from "node:crypto";
import type { Notifier } from "@tapedeck/engine";
import type { WebhookEndpointRecord, WebhookOutboxStore } from "../store/webhook-outbox-store.js";
import type { WebhookEndpoint, WebhookEventType } from "@tapedeck/protocol/api";
import { sees, type Scope } from "../tenancy/scope.js";
import { newEndpointSecret, type SecretBox } from "./endpoint-secret.js";

/** The notifier topic of a change to the endpoints (one created or deleted): every server reads them again. */
export const WEBHOOK_ENDPOINTS_TOPIC = "webhook-endpoints";

/** An endpoint as the delivery loop uses it: where to send, and the secret to sign with. */
export interface EndpointTarget {
  readonly url: string;
  readonly secret: string;
  /** The operator's: deliveries may reach private addresses (see `WebhookPoster`). */
  readonly anyAddress: boolean;
}

/**
 * The webhook endpoints, kept in memory (they change rarely and every event reads them) and in
 * the store (written first: an endpoint exists once it is durable). Each belongs to a scope, a
 * namespace and labels: it gets the events of runs inside it only, and callers see it only if
 * their own scope contains it. Several servers on one store each keep a copy: one that creates
 * or deletes an endpoint tells the others (`WEBHOOK_ENDPOINTS_TOPIC`), and whoever fans events
 * out or delivers reads the store again first (`refresh`), so no event misses an endpoint that
 * was durable before it was recorded, whichever server made it.
 */
export class WebhookEndpoints {
  readonly #outbox: WebhookOutboxStore;
  readonly #box: SecretBox;
  readonly #endpoints = new Map<string, { readonly record: WebhookEndpointRecord; readonly secret: string | undefined }>();

  readonly #notifier: Notifier | undefined;

  private constructor(outbox: WebhookOutboxStore, box: SecretBox, notifier: Notifier | undefined) {
    this.#outbox = outbox;
    this.#box = box;
    this.#notifier = notifier;
  }

  /** Reads the store's endpoints; with a `notifier`, hears the other servers' changes (until the notifier closes). */
  static async load(outbox: WebhookOutboxStore, box: SecretBox, notifier?: Notifier): Promise<WebhookEndpoints> {
    const endpoints = new WebhookEndpoints(outbox, box, notifier);
    await endpoints.refresh();
    notifier?.subscribe(WEBHOOK_ENDPOINTS_TOPIC, () => void endpoints.refresh().catch(() => {}));
    return endpoints;
  }

  /** Reads the endpoints from the store again: those another server created or deleted are known here after it resolves. */
  async refresh(): Promise<void> {
    const records = await this.#outbox.listEndpoints();
    const ids = new Set(records.map((record) => record.id));
    for (const id of this.#endpoints.keys()) if (!ids.has(id)) this.#endpoints.delete(id);
    for (const record of records) {
      if (!this.#endpoints.has(record.id)) this.#endpoints.set(record.id, { record, secret: this.#box.open(record.secret) });
    }
  }

  /** Registers an endpoint in `scope`; the secret is returned this once. */
  async create(
    request: {
      readonly url: string;
      readonly events?: readonly WebhookEventType[];
      readonly scope: Scope;
      readonly description?: string;
      readonly anyAddress: boolean;
    },
    now: number,
  ): Promise<{ readonly endpoint: WebhookEndpoint; readonly secret: string }> {
    const secret = newEndpointSecret();
    const { namespace, labels } = request.scope;
    const record: WebhookEndpointRecord = {
      id: `wh_${randomBytes(9).toString("base64url")}`,
      url: request.url,
      ...(request.events === undefined ? {} : { events: [...new Set(request.events)] }),
      ...(namespace === undefined ? {} : { namespace }),
      ...(Object.keys(labels).length === 0 ? {} : { labels }),
      secret: this.#box.seal(secret),
      ...(request.description === undefined ? {} : { description: request.description }),
      ...(request.anyAddress ? { anyAddress: true } : {}),
      createdAt: now,
    };
    await this.#outbox.putEndpoint(record);
    this.#endpoints.set(record.id, { record, secret });
    this.#notifier?.publish(WEBHOOK_ENDPOINTS_TOPIC);
    return { endpoint: endpointView(record), secret };
  }

  /** The endpoints a caller with `scope` may see, oldest first. */
  list(scope: Scope): WebhookEndpoint[] {
    return [...this.#endpoints.values()].filter(({ record }) => sees(scope, scopeOf(record))).map(({ record }) => endpointView(record));
  }

  /** Whether the endpoint exists and `scope` may see it. */
  has(scope: Scope, id: string): boolean {
    const found = this.#endpoints.get(id);
    return found !== undefined && sees(scope, scopeOf(found.record));
  }

  /** Deletes it if `scope` may see it; false otherwise (as for one that does not exist). */
  async delete(scope: Scope, id: string): Promise<boolean> {
    if (!this.has(scope, id)) return false;
    await this.#outbox.deleteEndpoint(id);
    this.#endpoints.delete(id);
    this.#notifier?.publish(WEBHOOK_ENDPOINTS_TOPIC);
    return true;
  }

  /** The ids of the endpoints that want `type` for a run with this namespace and labels. */
  matching(type: WebhookEventType, run: { readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> }): string[] {
    return [...this.#endpoints.values()]
      .filter(({ record }) => (record.events === undefined || record.events.includes(type)) && sees(scopeOf(record), run))
      .map(({ record }) => record.id);
  }

  /** Whether any endpoint wants `type` (from any run): lets the outbox skip reading the run. */
  wants(type: WebhookEventType): boolean {
    return [...this.#endpoints.values()].some(({ record }) => record.events === undefined || record.events.includes(type));
  }

  /** Where to send, and how to sign; undefined for an endpoint deleted since, or whose secret cannot be read. */
  target(id: string): EndpointTarget | undefined {
    const found = this.#endpoints.get(id);
    return found?.secret === undefined ? undefined : { url: found.record.url, secret: found.secret, anyAddress: found.record.anyAddress === true };
  }
}

function scopeOf(record: WebhookEndpointRecord): Scope {
  return { ...(record.namespace === undefined ? {} : { namespace: record.namespace }), labels: record.labels ?? {} };
}

function endpointView(record: WebhookEndpointRecord): WebhookEndpoint {
  return {
    id: record.id,
    url: record.url,
    // Written by `create` from validated event types.
    ...(record.events === undefined ? {} : { events: record.events as WebhookEventType[] }),
    ...(record.namespace === undefined ? {} : { namespace: record.namespace }),
    labels: record.labels ?? {},
    ...(record.description === undefined ? {} : { description: record.description }),
    createdAt: record.createdAt,
  };
}
