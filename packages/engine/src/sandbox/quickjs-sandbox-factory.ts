import { guardedLimitError } from "./limit-errors.js";
import { QuickJsSandbox } from "./quickjs-sandbox.js";
import { SandboxStoppedError, type Sandbox, type SandboxFactory, type SandboxOptions, type SandboxPool, type StartedSandbox, type Step } from "./sandbox.js";
import { StuckRequestError, WorkerClient, type WorkerClientEvents } from "./worker-client.js";

/**
 * Sandboxes in QuickJS (WebAssembly), run by a pool of worker threads. Each worker compiles the
 * WASM module once and hosts many sandboxes, each an instance of it with a heap of its own (one
 * QuickJS runtime each). Invariants:
 * - a new sandbox goes to the live worker with the fewest sandboxes;
 * - the pool keeps `workers` workers: it starts one when a worker dies after having loaded (a
 *   worker that fails to load is not restarted in a loop; the next `create` starts one instead);
 * - a worker stuck in a script past its budget plus `watchdogGraceMs` is ended (see
 *   `worker-client.ts`): the stuck sandbox ends with a limit error, the others are lost
 *   (`SandboxLostError`) and rebuilt elsewhere by their engine;
 * - idle workers never keep the process alive;
 * - `run` is `create` and `start` in one request: a user tool's call with no host call is one
 *   round trip, its sandbox freed by the worker with the step that ends it.
 */
export interface QuickJsSandboxFactoryOptions {
  /** Worker threads. Default 2. */
  readonly workers?: number;
  /** How long past its CPU budget a stuck script may hold its worker before the worker is ended, ms. Default `WATCHDOG_GRACE_MS` (2 s). */
  readonly watchdogGraceMs?: number;
}

/** Two workers: sandboxes of busy runs do not wait on each other, on a small machine. */
const DEFAULT_WORKERS = 2;

export class QuickJsSandboxFactory implements SandboxFactory {
  private readonly workers: number;
  private readonly graceMs: number | undefined;
  private readonly clients = new Set<WorkerClient>();
  private readonly events: WorkerClientEvents;
  private nextSandboxId = 1;
  private closed = false;

  constructor(options: QuickJsSandboxFactoryOptions = {}) {
    this.workers = Math.max(1, options.workers ?? DEFAULT_WORKERS);
    this.graceMs = options.watchdogGraceMs;
    this.events = {
      onExit: (client) => {
        this.clients.delete(client);
        if (client.ready) this.fill();
      },
    };
    this.fill();
  }

  async create(options: SandboxOptions): Promise<Sandbox> {
    const { client, sandboxId, release } = this.place();
    try {
      await client.request({ type: "create", sandboxId, options });
    } catch (error) {
      release();
      throw error;
    }
    return new QuickJsSandbox(client, sandboxId, options.limits, release);
  }

  async run(options: SandboxOptions): Promise<StartedSandbox> {
    const { client, sandboxId, release } = this.place();
    let step: Step;
    try {
      step = await client.request({ type: "run", sandboxId, options });
    } catch (error) {
      release();
      if (error instanceof StuckRequestError) throw new SandboxStoppedError(guardedLimitError("stuck", options.limits));
      throw error;
    }
    const sandbox = new QuickJsSandbox(client, sandboxId, options.limits, release, true);
    return { sandbox, step: sandbox.first(step) };
  }

  /** The worker a new sandbox goes to, its id, and how to take it off the worker's count. */
  private place(): { client: WorkerClient; sandboxId: number; release: () => void } {
    if (this.closed) throw new Error("This sandbox factory was closed.");
    this.fill();
    const client = this.leastLoaded();
    const sandboxId = this.nextSandboxId++;
    client.sandboxes++;
    return { client, sandboxId, release: () => client.sandboxes-- };
  }

  pool(): SandboxPool {
    let sandboxes = 0;
    for (const client of this.clients) sandboxes += client.sandboxes;
    return { workers: this.clients.size, sandboxes };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.clients].map((client) => client.terminate("The sandbox factory was closed.")));
  }

  /** Starts workers until there are `workers` of them. */
  private fill(): void {
    if (this.closed) return;
    for (let live = this.clients.size; live < this.workers; live++) this.clients.add(new WorkerClient(this.events, this.graceMs));
  }

  private leastLoaded(): WorkerClient {
    let best: WorkerClient | undefined;
    for (const client of this.clients) {
      if (client.lost !== undefined) continue;
      if (best === undefined || client.sandboxes < best.sandboxes) best = client;
    }
    if (best === undefined) throw new Error("No sandbox worker is available.");
    return best;
  }
}
