import type { JsonValue } from "../json.js";
import type { DecisionWait, RunError, RunWait } from "../run.js";
import type { Labels } from "./labels.js";

/**
 * The wire format of the events the server POSTs to a webhook endpoint (see `verifyWebhook` of
 * the SDK for the signature): the body, and the headers that sign it.
 */

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

/** The headers of a delivery (Standard Webhooks): the event id, the time it was signed, the signatures. */
export const WebhookHeader = {
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature",
} as const;
