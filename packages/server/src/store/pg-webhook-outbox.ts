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
  NamespaceOutbox,
} from "./webhook-outbox-store.js";
import { type DeliveryRow, deliveryFromRow, type EndpointRow, endpointFromRow, endpointToRow, newDeliveryToRow } from "./webhook-outbox-rows.js";

const ENDPOINT_COLUMNS = "id, url, events, namespace, labels, secret, description, any_address, created_at";
const DELIVERY_COLUMNS = "id, endpoint_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at";

/** Of a delivery: its event is of a run of namespace $1 (the body is JSON the server wrote), or its endpoint is that namespace's. */
const OF_NAMESPACE = "((body::jsonb -> 'data' ->> 'namespace') = $1 OR endpoint_id IN (SELECT id FROM webhook_endpoints WHERE namespace = $1))";

export class PgWebhookOutbox implements WebhookOutboxStore {
  readonly #handle: PostgresHandle;

  constructor(handle: PostgresHandle) {
    this.#handle = handle;
  }

  putEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    const row = endpointToRow(endpoint);
    const values = [row.id, row.url, row.events, row.namespace, row.labels, row.secret, row.description, row.any_address, row.created_at];
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

  purgeDeliveries(before: number, limit: number): Promise<number> {
    return this.#handle.write(
      async (tx) =>
        (
          await tx.query(
            "DELETE FROM webhook_deliveries WHERE ord IN (SELECT ord FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)",
            [before, limit],
          )
        ).rowCount ?? 0,
    );
  }

  eraseNamespace(namespace: string, limit: number): Promise<NamespaceOutbox> {
    return this.#handle.write(async (tx) => {
      const deliveries =
        (await tx.query(`DELETE FROM webhook_deliveries WHERE ord IN (SELECT ord FROM webhook_deliveries WHERE ${OF_NAMESPACE} LIMIT $2)`, [namespace, limit]))
          .rowCount ?? 0;
      const endpoints = deliveries === 0 ? ((await tx.query("DELETE FROM webhook_endpoints WHERE namespace = $1", [namespace])).rowCount ?? 0) : 0;
      return { deliveries, endpoints };
    });
  }

  async countNamespace(namespace: string): Promise<NamespaceOutbox> {
    const [row] = await this.#handle.read<{ deliveries: string; endpoints: string }>(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE ${OF_NAMESPACE}) AS deliveries,
         (SELECT count(*) FROM webhook_endpoints WHERE namespace = $1) AS endpoints`,
      [namespace],
    );
    return { deliveries: Number(row?.deliveries ?? 0), endpoints: Number(row?.endpoints ?? 0) };
  }

  async countPurgeableDeliveries(before: number): Promise<number> {
    const [row] = await this.#handle.read<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1", [
      before,
    ]);
    return Number(row?.n ?? 0);
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
    const row = newDeliveryToRow(d);
    await tx.query(`INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, 'pending', '[]', $6, $7, $7)`, [
      row.id,
      row.endpoint_id,
      row.event_id,
      row.event_type,
      row.body,
      row.next_attempt_at,
      row.created_at,
    ]);
  }
}
