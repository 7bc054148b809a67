import { id } from "./fields.js";
import { labels, namespace, type Labels } from "./labels.js";
import { schemaFor } from "./schema-for.js";
import { WebhookEventType } from "./webhook-events.js";

/** The wire format of webhook endpoints (`/v1/webhooks`): where events go, and their delivery log. */

/** Deliveries per page of an endpoint's log: default and most (a delivery is small: the body is not listed). */
export const DELIVERIES_LIMIT = { default: 50, max: 500 } as const;
/** Longest endpoint URL: what browsers and proxies take. */
const URL_MAX_LENGTH = 2048;

export const webhookEventType = { type: "string", enum: Object.values(WebhookEventType) } as const;

/** `/v1/webhooks/:id/…`. */
export interface WebhookEndpointParams {
  readonly id: string;
}

export const webhookEndpointParams = schemaFor<WebhookEndpointParams>()({
  type: "object",
  properties: { id: { ...id, description: "An endpoint id (`wh_…`)." } },
  required: ["id"],
  additionalProperties: false,
});

/** `POST /v1/webhooks`. */
export interface CreateWebhookRequest {
  /** Where the events are POSTed: an http(s) URL. */
  readonly url: string;
  /** The event types to send. Default: every type. */
  readonly events?: readonly WebhookEventType[];
  /** Only events of runs of this end user (a key or token limited to a namespace sets it itself). */
  readonly namespace?: string;
  /** Only events of runs carrying these labels (added to the caller's own). */
  readonly labels?: Labels;
  readonly description?: string;
}

export const createWebhookRequest = schemaFor<CreateWebhookRequest>()({
  type: "object",
  properties: {
    url: { type: "string", minLength: 1, maxLength: URL_MAX_LENGTH },
    events: { type: "array", minItems: 1, maxItems: 20, items: webhookEventType, description: "Default: every type." },
    namespace,
    labels,
    description: { type: "string", maxLength: 1024 },
  },
  required: ["url"],
  additionalProperties: false,
});

/** A registered endpoint. Its secret is shown once, when it is created. */
export interface WebhookEndpoint {
  /** `wh_…`. */
  readonly id: string;
  readonly url: string;
  /** Absent: every type. */
  readonly events?: readonly WebhookEventType[];
  readonly namespace?: string;
  readonly labels: Labels;
  readonly description?: string;
  readonly createdAt: number;
}

export const webhookEndpoint = schemaFor<WebhookEndpoint>()({
  type: "object",
  properties: {
    id: { type: "string" },
    url: { type: "string" },
    events: { type: "array", items: webhookEventType },
    namespace,
    labels,
    description: { type: "string" },
    createdAt: { type: "integer" },
  },
  required: ["id", "url", "labels", "createdAt"],
});

/** `POST /v1/webhooks` answers 201 with the endpoint and its signing secret. */
export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** `whsec_…`: verify each delivery with it (`verifyWebhook`). Shown this once. */
  readonly secret: string;
}

export const createdWebhookEndpoint = schemaFor<CreatedWebhookEndpoint>()({
  ...webhookEndpoint,
  properties: { ...webhookEndpoint.properties, secret: { type: "string" } },
  required: [...webhookEndpoint.required, "secret"],
});

/** `GET /v1/webhooks`. */
export interface WebhookEndpointList {
  readonly endpoints: readonly WebhookEndpoint[];
}

export const webhookEndpointList = schemaFor<WebhookEndpointList>()({
  type: "object",
  properties: { endpoints: { type: "array", items: webhookEndpoint } },
  required: ["endpoints"],
});

/** One try at delivering an event. */
export interface WebhookAttempt {
  /** 1, 2, 3… */
  readonly attempt: number;
  readonly at: number;
  readonly durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  readonly statusCode?: number;
  /** Why the attempt failed (a non-2xx status, a timeout, a refused connection). */
  readonly error?: string;
}

/** One event owed to one endpoint. */
export interface WebhookDelivery {
  /** `dlv_…`. */
  readonly id: string;
  readonly eventId: string;
  readonly eventType: WebhookEventType;
  /** `pending` (an attempt is due at `nextAttemptAt`), `delivered` (a 2xx), `failed` (every attempt failed). */
  readonly status: "pending" | "delivered" | "failed";
  readonly attempts: readonly WebhookAttempt[];
  readonly nextAttemptAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const webhookDelivery = schemaFor<WebhookDelivery>()({
  type: "object",
  properties: {
    id: { type: "string" },
    eventId: { type: "string" },
    eventType: webhookEventType,
    status: { type: "string", enum: ["pending", "delivered", "failed"] },
    attempts: {
      type: "array",
      items: {
        type: "object",
        properties: {
          attempt: { type: "integer" },
          at: { type: "integer" },
          durationMs: { type: "integer" },
          statusCode: { type: "integer" },
          error: { type: "string" },
        },
        required: ["attempt", "at", "durationMs"],
      },
    },
    nextAttemptAt: { type: "integer" },
    createdAt: { type: "integer" },
    updatedAt: { type: "integer" },
  },
  required: ["id", "eventId", "eventType", "status", "attempts", "createdAt", "updatedAt"],
});

/** The query string of `GET /v1/webhooks/:id/deliveries`. */
export interface DeliveriesQuery {
  /** Deliveries at most. Default 50, at most 500. */
  readonly limit?: number;
  /** A delivery id: only older ones (the `next` of the previous page). */
  readonly before?: string;
}

export const deliveriesQuery = schemaFor<DeliveriesQuery>()({
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: DELIVERIES_LIMIT.max, description: `Default ${DELIVERIES_LIMIT.default}.` },
    before: { ...id, description: "A delivery id: only older ones." },
  },
  additionalProperties: false,
});

/** `GET /v1/webhooks/:id/deliveries`, newest first. */
export interface WebhookDeliveryList {
  readonly deliveries: readonly WebhookDelivery[];
  /** The `before` of the next (older) page, when there is more. */
  readonly next?: string;
}

export const webhookDeliveryList = schemaFor<WebhookDeliveryList>()({
  type: "object",
  properties: { deliveries: { type: "array", items: webhookDelivery }, next: { type: "string" } },
  required: ["deliveries"],
});
