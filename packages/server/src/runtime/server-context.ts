import type { Engine, Store } from "@tapedeck/engine";
import type { HostTaskBroker } from "../host-tasks/host-task-broker.js";
import type { WorkerPresence } from "../host-tasks/worker-presence.js";
import type { ApiKeyStore } from "../store/api-key-store.js";
import type { WebhookOutboxStore } from "../store/webhook-outbox-store.js";
import type { WebhookEndpoints } from "../webhooks/webhook-endpoints.js";
import { ApiError } from "../http/api-error.js";
import { RunQuotas, type Quotas } from "../quotas/run-quotas.js";
import type { TokenSigner } from "../http/auth/tokens.js";
import type { InProcessChannel } from "../http/in-process-channel.js";
import type { RefusedCredential } from "../logging/refused-credentials.js";
import { ServerMetrics } from "../telemetry/server-metrics.js";

/**
 * What the routes share. The engine opens after the server listens (run-bound webhook URLs
 * must carry the address it got), so it is reached through `engine()`, which answers 503
 * until then and once the server is stopping.
 */
export class ServerContext {
  readonly store: Store;
  /** The server's API keys (`/v1` authentication), in the store's database. */
  readonly apiKeys: ApiKeyStore;
  /** The webhook deliveries the server owes, in the store's database. */
  readonly webhookOutbox: WebhookOutboxStore;
  readonly tokens: TokenSigner;
  /** Host tool calls waiting for workers (`/v1/tasks`). */
  readonly hostTasks: HostTaskBroker;
  /** Which workers poll (for the log: connected, lost). */
  readonly workers: WorkerPresence;
  /** Webhook endpoints (`/v1/webhooks`). */
  readonly webhooks: WebhookEndpoints;
  /** Set for an embedded server: how in-memory requests authenticate and hang up. */
  readonly inProcess: InProcessChannel | undefined;
  readonly now: () => number;
  /** Told of each refused credential (401), for the operator's log (`logging/refused-credentials.ts`). */
  readonly refused: ((reason: RefusedCredential) => void) | undefined;
  /** The test-only switches on (`ServeOptions.unsafeSwitches`), each with what it does: `/health` says them. */
  readonly unsafe: readonly string[];
  /** Quotas on starting runs, per namespace and per key (`quotas/run-quotas.ts`). */
  readonly quotas: RunQuotas;
  /** `/metrics` (`telemetry/server-metrics.ts`). */
  readonly metrics: ServerMetrics;
  readonly #stopping = new AbortController();
  #engine: Engine | undefined;
  /** What is wrong with the store, once a probe found it unreachable (`store-health.ts`); undefined while it answers. */
  storeProblem: () => string | undefined = () => undefined;

  constructor(parts: {
    readonly store: Store;
    readonly apiKeys: ApiKeyStore;
    readonly webhookOutbox: WebhookOutboxStore;
    readonly tokens: TokenSigner;
    readonly hostTasks: HostTaskBroker;
    readonly workers: WorkerPresence;
    readonly webhooks: WebhookEndpoints;
    readonly inProcess?: InProcessChannel;
    readonly now?: () => number;
    readonly refused?: (reason: RefusedCredential) => void;
    readonly unsafe?: readonly string[];
    readonly quotas?: Quotas;
  }) {
    this.store = parts.store;
    this.apiKeys = parts.apiKeys;
    this.webhookOutbox = parts.webhookOutbox;
    this.tokens = parts.tokens;
    this.hostTasks = parts.hostTasks;
    this.workers = parts.workers;
    this.webhooks = parts.webhooks;
    this.inProcess = parts.inProcess;
    this.now = parts.now ?? Date.now;
    this.refused = parts.refused;
    this.unsafe = parts.unsafe ?? [];
    this.quotas = new RunQuotas(parts.quotas ?? {}, parts.store, this.now);
    this.metrics = new ServerMetrics({
      store: this.store,
      engine: () => this.#engine,
      workers: () => this.workers.size,
      hostTasks: () => this.hostTasks.pending(),
    });
  }

  /** Aborted when the server starts stopping: requests holding for a run answer at once. */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  get ready(): boolean {
    return this.#engine !== undefined && !this.#stopping.signal.aborted && this.storeProblem() === undefined;
  }

  /** Throws the 503 of a server starting or stopping (for routes that need the server up but not the engine itself). */
  ensureOpen(): void {
    this.engine();
  }

  engine(): Engine {
    if (this.#stopping.signal.aborted) throw new ApiError("unavailable", "The server is stopping; retry against its next start.");
    if (!this.#engine) throw new ApiError("unavailable", "The server is starting; retry in a moment (GET /ready answers 200 once it can take requests).");
    this.ensureStoreReachable();
    return this.#engine;
  }

  /** Throws the 503 of a node whose store does not answer (its last probe, `store-health.ts`). */
  ensureStoreReachable(): void {
    const problem = this.storeProblem();
    if (problem !== undefined)
      throw new ApiError("unavailable", `This node takes no work while ${problem}. Retry against another node, or here once GET /health answers 200.`);
  }

  attach(engine: Engine): void {
    this.#engine = engine;
  }

  stop(): void {
    this.#stopping.abort();
    this.workers.close();
    this.metrics.close();
  }
}
