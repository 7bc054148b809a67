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
} from "./webhook-outbox-store.js";

interface EndpointRow {
  readonly id: string;
  readonly url: string;
  readonly events: string | null;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly secret: string;
  readonly description: string | null;
  readonly any_address: number;
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

export class SqliteWebhookOutbox implements WebhookOutboxStore {
  readonly #access: SqliteHandle;
  readonly #sql;

  constructor(handle: SqliteHandle) {
    const { db } = handle;
    this.#access = handle;
    this.#sql = {
      insertEndpoint: db.prepare<[EndpointRow]>(
        `INSERT INTO webhook_endpoints (id, url, events, namespace, labels, secret, description, any_address, created_at)
         VALUES (@id, @url, @events, @namespace, @labels, @secret, @description, @any_address, @created_at)`,
      ),
      endpoints: db.prepare<[], EndpointRow>("SELECT * FROM webhook_endpoints ORDER BY created_at, rowid"),
      deleteDeliveries: db.prepare<[string]>("DELETE FROM webhook_deliveries WHERE endpoint_id = ?"),
      deleteEndpoint: db.prepare<[string]>("DELETE FROM webhook_endpoints WHERE id = ?"),
      insertDelivery: db.prepare<[Omit<DeliveryRow, "status" | "attempts" | "updated_at">]>(
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
    };
  }

  putEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    return this.#access.write(() => {
      this.#sql.insertEndpoint.run({
        id: endpoint.id,
        url: endpoint.url,
        events: endpoint.events === undefined ? null : JSON.stringify(endpoint.events),
        namespace: endpoint.namespace ?? null,
        labels: endpoint.labels === undefined ? null : JSON.stringify(endpoint.labels),
        secret: endpoint.secret,
        description: endpoint.description ?? null,
        any_address: endpoint.anyAddress === true ? 1 : 0,
        created_at: endpoint.createdAt,
      });
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
    this.#sql.insertDelivery.run({
      id: d.id,
      endpoint_id: d.endpointId,
      event_id: d.eventId,
      event_type: d.eventType,
      body: d.body,
      next_attempt_at: d.nextAttemptAt,
      created_at: d.createdAt,
    });
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

function endpointFromRow(row: EndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    url: row.url,
    ...(row.events !== null && { events: JSON.parse(row.events) as string[] }),
    ...(row.namespace !== null && { namespace: row.namespace }),
    ...(row.labels !== null && { labels: JSON.parse(row.labels) as Record<string, string> }),
    secret: row.secret,
    ...(row.description !== null && { description: row.description }),
    ...(row.any_address === 1 && { anyAddress: true }),
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
