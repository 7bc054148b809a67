/**
 * The wire format of webhooks out: the endpoint routes (`/v1/webhooks`), their delivery log, and
 * the events the server POSTs to an endpoint (see `verifyWebhook` for the signature).
 */
import type { DecisionWait, JsonValue, RunError, RunWait } from "@tapedeck/protocol";
import type { Labels } from "./api.js";

/** What an endpoint can be sent. */
export const WebhookEventType = {
  /** A run parked: it waits for a signal, an approval, a sleep… (`data.waits`). */
  run_waiting: "run.waiting",
  /** A run ended with an output. */
  run_completed: "run.completed",
  /** A run failed (`data.error`). */
  run_failed: "run.failed",
  /** A run was cancelled (`data.reason`). */
  run_cancelled: "run.cancelled",
  /** A call waits for approve or reject (`data.wait`). */
  approval_requested: "approval.requested",
  /** A call was parked because its MCP tool changed under the run; approve, reject, cancel or fork. */
  tool_schema_changed: "tool.schema_changed",
  /** A call was parked because its credentials expired; renew them, then approve. */
  credentials_expired: "credentials.expired",
} as const;
export type WebhookEventType = (typeof WebhookEventType)[keyof typeof WebhookEventType];

/** What every event says of its run. */
export interface WebhookRunData {
  readonly runId: string;
  readonly toolset: string;
  readonly namespace?: string;
  readonly labels: Labels;
}

/** The most of a run's output an event carries; a larger one is left out (`outputOmitted`): read it with `runs.get`. */
export const WEBHOOK_OUTPUT_LIMIT_BYTES = 64 * 1024;

/** The data of each event type. */
export interface WebhookEventData {
  readonly "run.waiting": WebhookRunData & { readonly waits: readonly RunWait[]; readonly wakeAt?: number };
  readonly "run.completed": WebhookRunData & { readonly output?: JsonValue; readonly outputOmitted?: true };
  readonly "run.failed": WebhookRunData & { readonly error: RunError };
  readonly "run.cancelled": WebhookRunData & { readonly reason: string };
  readonly "approval.requested": WebhookRunData & { readonly wait: DecisionWait };
  readonly "tool.schema_changed": WebhookRunData & { readonly wait: DecisionWait };
  readonly "credentials.expired": WebhookRunData & { readonly wait: DecisionWait };
}

/** The JSON body of a webhook: one event. `id` is the same on every attempt: deduplicate by it. */
export type WebhookEvent = {
  readonly [T in WebhookEventType]: {
    /** `evt_…`: the same for every attempt (and every endpoint) of this event. */
    readonly id: string;
    readonly type: T;
    /** When the event happened, ms since the epoch. */
    readonly createdAt: number;
    readonly data: WebhookEventData[T];
  };
}[WebhookEventType];

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

/** `POST /v1/webhooks` answers 201 with the endpoint and its signing secret. */
export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** `whsec_…`: verify each delivery with it (`verifyWebhook`). Shown this once. */
  readonly secret: string;
}

/** `GET /v1/webhooks`. */
export interface WebhookEndpointList {
  readonly endpoints: readonly WebhookEndpoint[];
}

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

/** `GET /v1/webhooks/:id/deliveries`, newest first. */
export interface WebhookDeliveryList {
  readonly deliveries: readonly WebhookDelivery[];
  /** The `before` of the next (older) page, when there is more. */
  readonly next?: string;
}

/** The headers of a delivery (Standard Webhooks): the event id, the time it was signed, the signatures. */
export const WebhookHeader = {
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature",
} as const;
