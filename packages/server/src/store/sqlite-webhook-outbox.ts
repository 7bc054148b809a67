/**
 * The webhook outbox in the SQLite store's database (tables of `server-migrations.ts`), through
 * the store's handle: written in the store's group commit, so that its writes have the store's
 * durability, and a fan-out removes the engine's recorded events in its own commit.
 *
 * Invariants:
 * - A delivery's attempts are a JSON array on its row (at most a handful: the server caps them),
 *   appended in the same statement that sets what happens next.
 * - Deleting an endpoint deletes its deliveries in the same commit: nothing is sent for an
 *   endpoint that is gone.
 */
import type { SqliteHandle } from "@tapedeck/engine/sqlite";
import type {
  DeliveryNext,
  NewWebhookDelivery,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  WebhookOutboxStore,
  NamespaceOutbox,
} from "./webhook-outbox-store.js";
import {
  type DeliveryRow,
  deliveryFromRow,
  type EndpointRow,
  endpointFromRow,
  endpointToRow,
  type NewDeliveryRow,
  newDeliveryToRow,
} from "./webhook-outbox-rows.js";

/** Of a delivery: its event is of a run of namespace `@ns`, or its endpoint is that namespace's. */
const OF_NAMESPACE = `(json_extract(body, '$.data.namespace') = @ns OR endpoint_id IN (SELECT id FROM webhook_endpoints WHERE namespace = @ns))`;

export class SqliteWebhookOutbox implements WebhookOutboxStore {
  readonly #access: SqliteHandle;
  readonly #sql;

  constructor(handle: SqliteHandle) {
    const { db } = handle;
    this.#access = handle;
    this.#sql = {
      insertEndpoint: db.prepare<[EndpointRow<number>]>(
        `INSERT INTO webhook_endpoints (id, url, events, namespace, labels, secret, description, any_address, created_at)
         VALUES (@id, @url, @events, @namespace, @labels, @secret, @description, @any_address, @created_at)`,
      ),
      endpoints: db.prepare<[], EndpointRow>("SELECT * FROM webhook_endpoints ORDER BY created_at, rowid"),
      deleteDeliveries: db.prepare<[string]>("DELETE FROM webhook_deliveries WHERE endpoint_id = ?"),
      deleteEndpoint: db.prepare<[string]>("DELETE FROM webhook_endpoints WHERE id = ?"),
      insertDelivery: db.prepare<[NewDeliveryRow]>(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
         VALUES (@id, @endpoint_id, @event_id, @event_type, @body, 'pending', '[]', @next_attempt_at, @created_at, @created_at)`,
      ),
      due: db.prepare<[number, number], DeliveryRow>(
        "SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, rowid LIMIT ?",
      ),
      next: db.prepare<[], { at: number | null }>("SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'"),
      // json_insert with '$[#]' appends to the array.
      recordAttempt: db.prepare<[string, string, number | null, number, string]>(
        "UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(?)), status = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?",
      ),
      list: db.prepare<[string, number], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY rowid DESC LIMIT ?"),
      listBefore: db.prepare<[string, string, number], DeliveryRow>(
        "SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND rowid < (SELECT rowid FROM webhook_deliveries WHERE id = ?) ORDER BY rowid DESC LIMIT ?",
      ),
      purge: db.prepare<[number, number]>(
        "DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ? LIMIT ?)",
      ),
      countPurgeable: db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ?"),
      eraseDeliveries: db.prepare<[{ ns: string; limit: number }]>(
        `DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE ${OF_NAMESPACE} LIMIT @limit)`,
      ),
      eraseEndpoints: db.prepare<[string]>("DELETE FROM webhook_endpoints WHERE namespace = ?"),
      countNamespace: db.prepare<[{ ns: string }], { deliveries: number; endpoints: number }>(
        `SELECT (SELECT count(*) FROM webhook_deliveries WHERE ${OF_NAMESPACE}) AS deliveries,
           (SELECT count(*) FROM webhook_endpoints WHERE namespace = @ns) AS endpoints`,
      ),
    };
  }

  eraseNamespace(namespace: string, limit: number): Promise<NamespaceOutbox> {
    let erased: NamespaceOutbox = { deliveries: 0, endpoints: 0 };
    return this.#access
      .write(() => {
        const deliveries = this.#sql.eraseDeliveries.run({ ns: namespace, limit }).changes;
        erased = { deliveries, endpoints: deliveries === 0 ? this.#sql.eraseEndpoints.run(namespace).changes : 0 };
      })
      .then(() => erased);
  }

  countNamespace(namespace: string): Promise<NamespaceOutbox> {
    return this.#access.read(() => this.#sql.countNamespace.get({ ns: namespace }) ?? { deliveries: 0, endpoints: 0 });
  }

  purgeDeliveries(before: number, limit: number): Promise<number> {
    let deleted = 0;
    return this.#access
      .write(() => {
        deleted = this.#sql.purge.run(before, limit).changes;
      })
      .then(() => deleted);
  }

  countPurgeableDeliveries(before: number): Promise<number> {
    return this.#access.read(() => this.#sql.countPurgeable.get(before)?.n ?? 0);
  }

  putEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    return this.#access.write(() => {
      const row = endpointToRow(endpoint);
      this.#sql.insertEndpoint.run({ ...row, any_address: row.any_address ? 1 : 0 });
    });
  }

  listEndpoints(): Promise<WebhookEndpointRecord[]> {
    return this.#access.read(() => this.#sql.endpoints.all().map(endpointFromRow));
  }

  deleteEndpoint(id: string): Promise<boolean> {
    let deleted = false;
    return this.#access
      .write(() => {
        this.#sql.deleteDeliveries.run(id);
        deleted = this.#sql.deleteEndpoint.run(id).changes === 1;
      })
      .then(() => deleted);
  }

  fanOut(events: readonly { readonly recorded: number; readonly deliveries: readonly NewWebhookDelivery[] }[]): Promise<number> {
    let fannedOut = 0;
    return this.#access
      .write(() => {
        for (const event of events) {
          // Gone already: another server took it, with its deliveries.
          if (!this.#access.removeRecordedEvent(event.recorded)) continue;
          fannedOut++;
          for (const d of event.deliveries) this.#insert(d);
        }
      })
      .then(() => fannedOut);
  }

  putDeliveries(deliveries: readonly NewWebhookDelivery[]): Promise<void> {
    return this.#access.write(() => {
      for (const d of deliveries) this.#insert(d);
    });
  }

  #insert(d: NewWebhookDelivery): void {
    this.#sql.insertDelivery.run(newDeliveryToRow(d));
  }

  dueDeliveries(now: number, limit: number): Promise<WebhookDeliveryRecord[]> {
    return this.#access.read(() => this.#sql.due.all(now, limit).map(deliveryFromRow));
  }

  nextDeliveryAt(): Promise<number | undefined> {
    return this.#access.read(() => this.#sql.next.get()?.at ?? undefined);
  }

  recordAttempt(deliveryId: string, attempt: WebhookAttemptRecord, next: DeliveryNext): Promise<void> {
    return this.#access.write(() => {
      this.#sql.recordAttempt.run(
        JSON.stringify(attempt),
        next.status,
        next.status === "pending" ? next.nextAttemptAt : null,
        attempt.at + attempt.durationMs,
        deliveryId,
      );
    });
  }

  listDeliveries(endpointId: string, options: { readonly limit: number; readonly before?: string }): Promise<WebhookDeliveryRecord[]> {
    return this.#access.read(() => {
      const rows =
        options.before === undefined ? this.#sql.list.all(endpointId, options.limit) : this.#sql.listBefore.all(endpointId, options.before, options.limit);
      return rows.map(deliveryFromRow);
    });
  }
}
