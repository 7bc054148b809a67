/**
 * The server's webhook outbox: its webhook endpoints, the deliveries it owes them (one per
 * event and endpoint, written when the event happens) and the attempts made. A server concept:
 * the engine never reads it. It lives in the same database as the engine's store
 * (`server-stores.ts`), so that a delivery survives a restart with the runs whose events it
 * carries, and so that an event the engine recorded (`Store.recordedEvents`) is removed in the
 * commit that saves its deliveries (`fanOut`). Contract: `webhook-outbox-contract.ts`.
 *
 * Durability: as for the engine's store, a resolved write is committed. `putDeliveries` writes
 * every delivery of one event in one commit: an endpoint gets the event if and only if the other
 * endpoints it matched do.
 */
export interface WebhookOutboxStore {
  /** Saves a new endpoint. Fails (writing nothing) if its id exists. */
  putEndpoint(endpoint: WebhookEndpointRecord): Promise<void>;
  /** Every endpoint, oldest first. */
  listEndpoints(): Promise<WebhookEndpointRecord[]>;
  /** Deletes an endpoint and every delivery it has (pending ones are never sent). False if there was none. */
  deleteEndpoint(id: string): Promise<boolean>;

  /**
   * For each run event the engine recorded (by `RecordedRunEvent.id`, read with the engine
   * store's `recordedEvents`): removes it and saves its deliveries,
   * `pending`, all in one commit, so an event is either still recorded or has all its
   * deliveries. An event already removed (another server sharing the store fanned it out) gets
   * none here. Resolves with how many events this call fanned out.
   */
  fanOut(events: readonly { readonly recorded: number; readonly deliveries: readonly NewWebhookDelivery[] }[]): Promise<number>;
  /** Saves deliveries, `pending`, in one commit. */
  putDeliveries(deliveries: readonly NewWebhookDelivery[]): Promise<void>;
  /** Pending deliveries whose next attempt is due at `now`, earliest first, at most `limit`. */
  dueDeliveries(now: number, limit: number): Promise<WebhookDeliveryRecord[]>;
  /** The earliest next attempt of a pending delivery, if any. */
  nextDeliveryAt(): Promise<number | undefined>;
  /** Adds an attempt to a delivery and sets what happens next, in one commit. Does nothing for a delivery that no longer exists (its endpoint was deleted). */
  recordAttempt(deliveryId: string, attempt: WebhookAttemptRecord, next: DeliveryNext): Promise<void>;
  /** An endpoint's deliveries, newest first, at most `limit`; `before`: only those older than this delivery. */
  listDeliveries(endpointId: string, options: { readonly limit: number; readonly before?: string }): Promise<WebhookDeliveryRecord[]>;
  /**
   * Deletes at most `limit` deliveries no longer pending (delivered, or failed for good) whose
   * last change was before `before`, in one commit (retention: `retention/purge-ended.ts`);
   * resolves with how many. A pending delivery is never deleted here: it is still owed.
   */
  purgeDeliveries(before: number, limit: number): Promise<number>;
  /** How many deliveries `purgeDeliveries(before, …)` would delete, all batches together (a dry run). */
  countPurgeableDeliveries(before: number): Promise<number>;
  /**
   * One batch of an end user's erasure (`retention/erase-namespace.ts`), in one commit: at most
   * `limit` deliveries whose event is of a run of `namespace` (the body's `data.namespace`) or
   * whose endpoint is the namespace's, pending ones included; once none is left, the namespace's
   * endpoints. Resolves with how many of each it deleted (both 0: nothing is left).
   */
  eraseNamespace(namespace: string, limit: number): Promise<NamespaceOutbox>;
  /** What `eraseNamespace` would delete, all batches together (a dry run). */
  countNamespace(namespace: string): Promise<NamespaceOutbox>;
}

/** A namespace's part of the outbox. */
export interface NamespaceOutbox {
  readonly deliveries: number;
  readonly endpoints: number;
}

/** Where the server sends events, and which. */
export interface WebhookEndpointRecord {
  /** `wh_…`. */
  readonly id: string;
  readonly url: string;
  /** Event types it wants; absent: every type. */
  readonly events?: readonly string[];
  /** Only events of runs in this namespace… */
  readonly namespace?: string;
  /** …carrying these labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** The signing secret as the server keeps it (sealed: the store never holds it in clear). */
  readonly secret: string;
  readonly description?: string;
  /**
   * Made by the operator: deliveries may connect to any address its host resolves to (a
   * receiver on loopback or a private network). Otherwise (a tenant's) only public addresses.
   */
  readonly anyAddress?: boolean;
  readonly createdAt: number;
}

export interface NewWebhookDelivery {
  /** `dlv_…`. */
  readonly id: string;
  readonly endpointId: string;
  /** The event's id (`evt_…`): the same for every endpoint and every attempt. */
  readonly eventId: string;
  readonly eventType: string;
  /** The exact body sent (JSON text): signed as it is. */
  readonly body: string;
  readonly createdAt: number;
  /** When the first attempt is due. */
  readonly nextAttemptAt: number;
}

/** What a delivery has come to. */
export type DeliveryStatus =
  /** Not yet answered with a 2xx: an attempt is due at `nextAttemptAt`. */
  | "pending"
  /** An attempt got a 2xx. */
  | "delivered"
  /** Every attempt failed; no more will be made. */
  | "failed";

export interface WebhookAttemptRecord {
  /** 1, 2, 3… */
  readonly attempt: number;
  readonly at: number;
  readonly durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  readonly statusCode?: number;
  /** Why the attempt failed without an answer (timeout, connection refused…), or what the status means. */
  readonly error?: string;
}

export type DeliveryNext =
  /** Try again at `nextAttemptAt`. */
  | { readonly status: "pending"; readonly nextAttemptAt: number }
  /** Done: delivered, or failed for good. */
  | { readonly status: "delivered" | "failed" };

export interface WebhookDeliveryRecord extends Omit<NewWebhookDelivery, "nextAttemptAt"> {
  readonly status: DeliveryStatus;
  /** Oldest first. */
  readonly attempts: readonly WebhookAttemptRecord[];
  /** While `pending`: when the next attempt is due. */
  readonly nextAttemptAt?: number;
  readonly updatedAt: number;
}
