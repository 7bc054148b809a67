import { join } from "node:path";
import { closeAll, Engine, EngineError, HostTaskQueue, hostTaskArgsFor, InProcessHostTools, openStore, type Store } from "@tapedeck/engine";
import type { FastifyInstance } from "fastify";
import { HostTaskBroker } from "../host-tasks/host-task-broker.js";
import { HostToolRouter } from "../host-tasks/host-tool-router.js";
import { DeliveryLoop } from "../webhooks/delivery-loop.js";
import { SecretBox } from "../webhooks/endpoint-secret.js";
import { OutboxWriter } from "../webhooks/outbox-writer.js";
import { ExpirySweeper } from "../expiry/expiry-sweeper.js";
import { RetentionSweeper } from "../retention/retention-sweeper.js";
import { WorkerPresence } from "../host-tasks/worker-presence.js";
import { logRunEvents } from "../logging/run-log.js";
import type { ServerLogger } from "../logging/server-logger.js";
import { openServerStores, type ServerStores } from "../store/server-stores.js";
import { WebhookEndpoints } from "../webhooks/webhook-endpoints.js";
import { buildApp } from "../http/app.js";
import { ensureAdminKey } from "../http/auth/api-keys.js";
import { TokenSigner } from "../http/auth/tokens.js";
import type { InProcessChannel } from "../http/in-process-channel.js";
import type { ResolvedServeOptions } from "./serve-options.js";
import { ServerContext } from "./server-context.js";
import { StoreHealth } from "./store-health.js";
import { requireSharedMasterKey, signingSecret } from "./shared-secrets.js";
import { checkSecretFingerprints } from "./secret-fingerprints.js";
import { RefusedCredentialLog } from "../logging/refused-credentials.js";
import { shellArg } from "../shell-arg.js";

/** The server without a socket: what `startServer` listens with and `openEmbedded()` injects into. */
/** How long a stopping server waits for connections to close by themselves before closing them: held requests answer in milliseconds. */
const CLOSE_GRACE_MS = 2_000;

export interface ServerCore {
  readonly context: ServerContext;
  readonly app: FastifyInstance;
  /** The admin API key, when opening created it (a data folder's first start): shown once, never stored. */
  readonly adminKey: string | undefined;
  /** Opens the engine (run-bound webhook URLs point at `url`), starts the webhooks, and starts resuming, in the background, the runs a previous process left `running`. */
  open(url: string): Promise<void>;
  /** Stops taking requests, answers held ones, records the webhook attempts in flight, then closes the engine and the store. */
  close(): Promise<void>;
}

/**
 * Opens the data folder's store (migrating it), the admin key if the folder has no key (and
 * `adminKey` is asked for), the server secret, the webhook endpoints and the app. Until `open`,
 * `/v1` answers 503. Fails, closing what it opened, if the store cannot be opened.
 */
export async function openServerCore(
  options: ResolvedServeOptions,
  extra: { readonly adminKey: boolean; readonly inProcess?: InProcessChannel },
): Promise<ServerCore> {
  const store = await openStore(options.store, { durability: options.durability });
  let context: ServerContext | undefined;
  let app: FastifyInstance | undefined;
  try {
    const { logger } = options;
    // A store several nodes may share (a database URL; not a data folder, not memory): the secrets must be the same on each.
    // Checked before the admin key is made: a start that fails must not make a key nobody sees.
    const storeUrl = store.dataFolder === undefined && !options.store.startsWith("memory:");
    const env = process.env;
    const masterKeys = requireSharedMasterKey({ storeUrl, env });
    const secret = signingSecret({ storeUrl, dataDir: options.dataDir, signingSecretFile: options.signingSecretFile, env, warn: (line) => logger.warn(line) });
    const server = await openServerStores(store);
    // A node given other secrets than the store's other nodes is refused here, before it makes a key or signs anything.
    if (masterKeys !== undefined && server.secretFingerprints !== undefined)
      await checkSecretFingerprints(server.secretFingerprints, { signing: secret, masterKey: masterKeys.current, previousMasterKeys: masterKeys.previous });
    const admin = extra.adminKey ? await ensureAdminKey(server.apiKeys) : undefined;
    // Told of the other nodes' endpoint changes on a shared store (on one machine the notifier's poll would read them five times a second for nothing).
    const webhooks = await WebhookEndpoints.load(server.webhookOutbox, new SecretBox(secret), storeUrl ? store.notifier : undefined);
    const hostTasks = new HostTaskBroker(
      new HostTaskQueue(store, { onFault: (error) => logger.error({ err: error }, "host task queue fault"), args: hostTaskArgsFor(store) }),
    );
    const workers = new WorkerPresence({ logger, lostAfterMs: options.workerLostAfterMs });
    const refusedLog = new RefusedCredentialLog(logger, keysCreateCommand(storeUrl, options));
    if (options.unsafeSwitches.length > 0)
      logger.warn(
        { unsafe: options.unsafeSwitches },
        `UNSAFE: started with test-only switches (never run a production server so; GET /health lists them): ${options.unsafeSwitches.join("; ")}`,
      );
    const opened = new ServerContext({
      store,
      apiKeys: server.apiKeys,
      webhookOutbox: server.webhookOutbox,
      tokens: new TokenSigner(secret),
      hostTasks,
      workers,
      webhooks,
      refused: (reason) => refusedLog.note(reason),
      unsafe: options.unsafeSwitches,
      quotas: options.quotas,
      ...(extra.inProcess ? { inProcess: extra.inProcess } : {}),
    });
    context = opened;
    const served = await buildApp(opened, logger, options.mcpSessions);
    app = served;
    return new Core(options, store, server, opened, served, admin?.secret);
  } catch (error) {
    context?.stop();
    await app?.close();
    await store.close();
    throw error;
  }
}

/** The command that makes a key this server knows, for the log's hints: on its data folder, or on the store every node shares (whose URL holds a password, never printed). */
function keysCreateCommand(storeUrl: boolean, options: ResolvedServeOptions): string {
  if (storeUrl) return "`tapedeck keys create --store <the store's URL>` (or with TAPEDECK_STORE set to it), on any machine that reaches the database";
  if (options.store.startsWith("memory:")) return "no command: an in-memory store has only the keys its process made";
  return `\`tapedeck keys create --data ${shellArg(options.store)}\` on this server's machine`;
}

class Core implements ServerCore {
  #engine: Engine | undefined;
  #writer: OutboxWriter | undefined;
  #expiry: ExpirySweeper | undefined;
  #retention: RetentionSweeper | undefined;
  #deliveries: DeliveryLoop | undefined;
  #health: StoreHealth | undefined;
  #resuming: Promise<void> | undefined;

  constructor(
    private readonly options: ResolvedServeOptions,
    private readonly store: Store,
    private readonly server: ServerStores,
    readonly context: ServerContext,
    readonly app: FastifyInstance,
    readonly adminKey: string | undefined,
  ) {}

  async open(url: string): Promise<void> {
    const { options, store, server, context } = this;
    const local = options.hostTools ? new InProcessHostTools(options.hostTools) : undefined;
    const engine = await Engine.open({
      // Its master key file follows the data folder, as for `tapedeck credentials`: the CLI and the API share one vault.
      store,
      webhookBaseUrl: url,
      sources: { host: new HostToolRouter(local, context.hostTasks) },
      // Webhooks read run events from the store, so none is lost between a commit and its delivery.
      recordEvents: true,
      // Due schedules start their runs here; every node on a shared store fires, each fire starting one run (the store's claim and the fire's key).
      fireSchedules: true,
      unsafeHttpAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(options.userToolCeilings === undefined ? {} : { userToolCeilings: options.userToolCeilings }),
      // The namespaces' quota of calls is the engine's to count: it gates every call (`rate-gate.ts`).
      ...(options.quotas.perNamespace?.callsPerMinute === undefined ? {} : { limits: { namespaceCallsPerMinute: options.quotas.perNamespace.callsPerMinute } }),
      // The tool library's workspaces and memory index: in the data folder, also when the store is a database URL.
      libraryFolder: join(store.dataFolder ?? options.dataDir, "library"),
    });
    this.#engine = engine;
    const { logger } = options;
    logRunEvents(engine, logger);
    const deliveries = new DeliveryLoop({
      outbox: server.webhookOutbox,
      // An endpoint another server created may not be known here yet: read them again before giving a delivery up.
      target: async (id) => context.webhooks.target(id) ?? (await context.webhooks.refresh(), context.webhooks.target(id)),
      schedule: options.webhooks.retry,
      timeoutMs: options.webhooks.timeoutMs,
      logger,
      failed: (gaveUp) => context.metrics.webhookFailed(gaveUp),
    });
    this.#deliveries = deliveries;
    this.#writer = new OutboxWriter({
      store,
      outbox: server.webhookOutbox,
      endpoints: context.webhooks,
      written: () => deliveries.kick(),
      log: (line) => logger.error(line),
    });
    this.#writer.listen(engine);
    context.attach(engine);
    const health = new StoreHealth(store, {
      lost: (problem) => logger.error(`${problem}; this node takes no work (GET /health answers 503) until it answers again`),
      back: () => logger.info("the store answers again; this node takes work again"),
      probed: (ms, problem) => logger.trace({ ms, ...(problem === undefined ? {} : { problem }) }, "store probed"),
    });
    this.#health = health;
    context.storeProblem = () => health.problem;
    health.start();
    // In the background: the node takes requests at once, however many runs there are to look at (one read each).
    this.#resuming = resumeLeftRunning(engine, logger, () => context.stopping.aborted);
    // Runs past their TTL are cancelled now (those that expired while no server ran), then every minute.
    this.#expiry = new ExpirySweeper({ engine: () => engine, log: (line) => logger.warn(line) });
    this.#expiry.start();
    // What ended longer ago than the retention period is deleted now, then every minute.
    if (options.retentionMs !== undefined) {
      this.#retention = new RetentionSweeper({
        engine: () => engine,
        outbox: server.webhookOutbox,
        retentionMs: options.retentionMs,
        ...(options.retentionSweepMs === undefined ? {} : { intervalMs: options.retentionSweepMs }),
        info: (line) => logger.info(line),
        error: (line) => logger.error(line),
      });
      this.#retention.start();
    }
    // Deliveries left pending by the previous process go out now (or at their time).
    deliveries.kick();
  }

  async close(): Promise<void> {
    this.context.stop();
    // Held requests answer as soon as the stop is said; a connection left open after that (a
    // client that keeps a keep-alive socket Node does not see as idle) would otherwise hold the
    // process for the keep-alive timeout (72 s).
    const cutoff = setTimeout(() => this.app.server.closeAllConnections(), CLOSE_GRACE_MS);
    cutoff.unref();
    await closeAll([
      () => this.app.close().finally(() => clearTimeout(cutoff)),
      async () => this.#expiry?.stop(),
      async () => this.#retention?.stop(),
      // Stops at its next run (the context is stopping): the engine closes after it.
      async () => this.#resuming,
      () => Promise.resolve(this.#health?.stop()),
      async () => this.#writer?.close(),
      async () => this.#deliveries?.close(),
      // The engine owns the store once open; before that, the store is closed here.
      () => (this.#engine ? this.#engine.close() : this.store.close()),
    ]);
  }
}

/**
 * Runs a previous process left `running` (it died or was killed) go on, one by one, until the
 * server stops: a run that cannot is reported and left as it is, without stopping the others.
 * Runs another live node holds are its own (they go on there): counted, said once, not faults.
 */
async function resumeLeftRunning(engine: Engine, logger: ServerLogger, stopping: () => boolean): Promise<void> {
  const counts = { resumed: 0, heldElsewhere: 0, failed: 0 };
  let runs: readonly { readonly id: string }[];
  try {
    runs = await engine.listRuns({ status: ["running"], limit: 10_000 });
  } catch (error) {
    logger.error({ err: error }, "the runs left running could not be listed; they are resumed when their lease lapses or at the next start");
    return;
  }
  for (const run of runs) {
    if (stopping()) break;
    try {
      await engine.resume(run.id);
      counts.resumed++;
      logger.info({ runId: run.id }, "run resumed (a previous process left it running)");
    } catch (error) {
      if (error instanceof EngineError && error.code === "conflict") {
        counts.heldElsewhere++;
        logger.debug({ runId: run.id }, "run left running is held by another live node; it goes on there");
        continue;
      }
      counts.failed++;
      logger.error({ runId: run.id, err: error }, "run was left running and cannot resume here");
    }
  }
  logger.info(
    counts,
    `start: of ${runs.length} run(s) left running, ${counts.resumed} resumed here, ${counts.heldElsewhere} held by other live nodes (they go on there), ${counts.failed} could not resume`,
  );
}
