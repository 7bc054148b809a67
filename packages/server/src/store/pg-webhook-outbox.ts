/**
 * The webhook outbox in the PostgreSQL store's database (tables of `pg-server-migrations.ts`),
 * through the store's handle: written in the store's group commit, and a fan-out removes the
 * engine's recorded events in its own transaction.
 *
 * Invariants:
 * - A delivery's attempts are a JSON array on its row, appended in the statement that sets what
 *   happens next (`jsonb` only for the append: the column keeps the text as written).
 * - Deleting an endpoint deletes its deliveries in the same commit.
 * - A fan-out deletes each recorded event before it writes its deliveries: of two nodes fanning
 *   out one event, the second's DELETE waits for the first's commit and then removes nothing, so
 *   the event's deliveries are written once.
 */
import type { PgTransaction, PostgresHandle } from "@tapedeck/engine/postgres";
import type {
  DeliveryNext,
  NewWebhookDelivery,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  WebhookOutboxStore,
} from "./webhook-outbox-store.js";

interface EndpointRow {
  readonly id: string;
  readonly url: string;
  readonly events: string | null;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly secret: string;
  readonly description: string | null;
  readonly any_address: boolean;
  readonly created_at: number;
}

interface DeliveryRow {
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

const ENDPOINT_COLUMNS = "id, url, events, namespace, labels, secret, description, any_address, created_at";
const DELIVERY_COLUMNS = "id, endpoint_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at";

export class PgWebhookOutbox implements WebhookOutboxStore {
  readonly #handle: PostgresHandle;

  constructor(handle: PostgresHandle) {
    this.#handle = handle;
  }

  putEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    const values = [
      endpoint.id,
      endpoint.url,
      endpoint.events === undefined ? null : JSON.stringify(endpoint.events),
      endpoint.namespace ?? null,
      endpoint.labels === undefined ? null : JSON.stringify(endpoint.labels),
      endpoint.secret,
      endpoint.description ?? null,
      endpoint.anyAddress === true,
      endpoint.createdAt,
    ];
    return this.#handle.write(async (tx) => {
      await tx.query(`INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, values);
    });
  }

  async listEndpoints(): Promise<WebhookEndpointRecord[]> {
    return (await this.#handle.read<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, ord`)).map(endpointFromRow);
  }

  deleteEndpoint(id: string): Promise<boolean> {
    return this.#handle.write(async (tx) => {
      await tx.query("DELETE FROM webhook_deliveries WHERE endpoint_id = $1", [id]);
      return (await tx.query("DELETE FROM webhook_endpoints WHERE id = $1", [id])).rowCount === 1;
    });
  }

  fanOut(events: readonly { readonly recorded: number; readonly deliveries: readonly NewWebhookDelivery[] }[]): Promise<number> {
    return this.#handle.write(async (tx) => {
      let fannedOut = 0;
      for (const event of events) {
        // Gone already: another server took it, with its deliveries.
        if (!(await this.#handle.removeRecordedEvent(tx, event.recorded))) continue;
        fannedOut++;
        await insertDeliveries(tx, event.deliveries);
      }
      return fannedOut;
    });
  }

  putDeliveries(deliveries: readonly NewWebhookDelivery[]): Promise<void> {
    return this.#handle.write((tx) => insertDeliveries(tx, deliveries));
  }

  async dueDeliveries(now: number, limit: number): Promise<WebhookDeliveryRecord[]> {
    const rows = await this.#handle.read<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, ord LIMIT $2`,
      [now, limit],
    );
    return rows.map(deliveryFromRow);
  }

  async nextDeliveryAt(): Promise<number | undefined> {
    const [row] = await this.#handle.read<{ at: number | null }>("SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'");
    return row?.at ?? undefined;
  }

  recordAttempt(deliveryId: string, attempt: WebhookAttemptRecord, next: DeliveryNext): Promise<void> {
    const values = [JSON.stringify(attempt), next.status, next.status === "pending" ? next.nextAttemptAt : null, attempt.at + attempt.durationMs, deliveryId];
    return this.#handle.write(async (tx) => {
      await tx.query(
        "UPDATE webhook_deliveries SET attempts = (attempts::jsonb || jsonb_build_array($1::jsonb))::text, status = $2, next_attempt_at = $3, updated_at = $4 WHERE id = $5",
        values,
      );
    });
  }

  async listDeliveries(endpointId: string, options: { readonly limit: number; readonly before?: string }): Promise<WebhookDeliveryRecord[]> {
    const rows =
      options.before === undefined
        ? await this.#handle.read<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY ord DESC LIMIT $2`, [
            endpointId,
            options.limit,
          ])
        : await this.#handle.read<DeliveryRow>(
            `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 AND ord < (SELECT ord FROM webhook_deliveries WHERE id = $2) ORDER BY ord DESC LIMIT $3`,
            [endpointId, options.before, options.limit],
          );
    return rows.map(deliveryFromRow);
  }
}

async function insertDeliveries(tx: PgTransaction, deliveries: readonly NewWebhookDelivery[]): Promise<void> {
  for (const d of deliveries) {
    await tx.query(`INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, 'pending', '[]', $6, $7, $7)`, [
      d.id,
      d.endpointId,
      d.eventId,
      d.eventType,
      d.body,
      d.nextAttemptAt,
      d.createdAt,
    ]);
  }
}

function endpointFromRow(row: EndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    url: row.url,
    ...(row.events !== null && { events: JSON.parse(row.events) as string[] }),
    ...(row.namespace !== null && { namespace: row.namespace }),
    ...(row.labels !== null && { labels: JSON.parse(row.labels) as Record<string, string> }),
    secret: row.secret,
    ...(row.description !== null && { description: row.description }),
    ...(row.any_address && { anyAddress: true }),
    createdAt: row.created_at,
  };
}

function deliveryFromRow(row: DeliveryRow): WebhookDeliveryRecord {
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
