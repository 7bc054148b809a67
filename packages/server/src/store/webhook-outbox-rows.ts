/**
 * The webhook outbox's rows, as both stores keep them (`server-migrations.ts`,
 * `pg-server-migrations.ts`): one mapping between rows and records, so that an endpoint or a
 * delivery reads back the same from either store.
 * - Optional fields are NULL when absent, and absent (not undefined) in the record read back.
 * - `any_address` is a boolean in PostgreSQL and 0/1 in SQLite; only a true flag is kept.
 * - Events, labels and attempts are JSON text, as written.
 */
import type { NewWebhookDelivery, WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from "./webhook-outbox-store.js";

export interface EndpointRow<AnyAddress extends boolean | number = boolean | number> {
  readonly id: string;
  readonly url: string;
  readonly events: string | null;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly secret: string;
  readonly description: string | null;
  readonly any_address: AnyAddress;
  readonly created_at: number;
}

export interface DeliveryRow {
  readonly id: string;
  readonly endpoint_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly body: string;
  readonly status: string;
  readonly attempts: string;
  readonly next_attempt_at: number | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** The columns of a new delivery that its caller gives (it starts pending, with no attempts). */
export type NewDeliveryRow = Omit<DeliveryRow, "status" | "attempts" | "updated_at">;

export function endpointToRow(endpoint: WebhookEndpointRecord): EndpointRow<boolean> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events === undefined ? null : JSON.stringify(endpoint.events),
    namespace: endpoint.namespace ?? null,
    labels: endpoint.labels === undefined ? null : JSON.stringify(endpoint.labels),
    secret: endpoint.secret,
    description: endpoint.description ?? null,
    any_address: endpoint.anyAddress === true,
    created_at: endpoint.createdAt,
  };
}

export function endpointFromRow(row: EndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    url: row.url,
    ...(row.events !== null && { events: JSON.parse(row.events) as string[] }),
    ...(row.namespace !== null && { namespace: row.namespace }),
    ...(row.labels !== null && { labels: JSON.parse(row.labels) as Record<string, string> }),
    secret: row.secret,
    ...(row.description !== null && { description: row.description }),
    ...((row.any_address === true || row.any_address === 1) && { anyAddress: true }),
    createdAt: row.created_at,
  };
}

export function newDeliveryToRow(d: NewWebhookDelivery): NewDeliveryRow {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    body: d.body,
    next_attempt_at: d.nextAttemptAt,
    created_at: d.createdAt,
  };
}

export function deliveryFromRow(row: DeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    body: row.body,
    // The store wrote the status itself, from `DeliveryStatus`.
    status: row.status as WebhookDeliveryRecord["status"],
    attempts: JSON.parse(row.attempts) as WebhookAttemptRecord[],
    ...(row.next_attempt_at !== null && { nextAttemptAt: row.next_attempt_at }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
