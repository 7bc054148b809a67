import { QuickJsSandbox } from "./quickjs-sandbox.js";
import type { Sandbox, SandboxFactory, SandboxOptions } from "./sandbox.js";
import { WorkerClient, type WorkerClientEvents } from "./worker-client.js";

/**
 * Sandboxes in QuickJS (WebAssembly), run by a pool of worker threads. Each worker loads one
 * WASM module and hosts many sandboxes (one QuickJS runtime each). Invariants:
 * - a new sandbox goes to the live, non-retired worker with the fewest sandboxes;
 * - the pool keeps `workers` workers that take new sandboxes: it starts one when a worker is
 *   retired (its heap passed `workerHeapLimitBytes`) or dies after having loaded (a worker that
 *   fails to load is not restarted in a loop; the next `create` starts one instead);
 * - a retired worker is ended once its last sandbox is disposed: WASM memory never shrinks,
 *   and ending the thread is the only way to return it;
 * - idle workers never keep the process alive.
 */
export interface QuickJsSandboxFactoryOptions {
  /** Worker threads taking new sandboxes. Default 2. */
  readonly workers?: number;
  /**
   * A worker's WASM heap past which the script growing it is stopped with a limit error and the
   * worker is retired. Default 512 MiB. This is what stops many small allocations, which the
   * per-sandbox memory limit does not see.
   */
  readonly workerHeapLimitBytes?: number;
}

/** Two workers: sandboxes of busy runs do not wait on each other, on a small machine. */
const DEFAULT_WORKERS = 2;
/** Room for hundreds of runs of a few MiB each, far below WASM32's 2 GiB heap cap. */
const DEFAULT_WORKER_HEAP_LIMIT_BYTES = 512 * 1024 * 1024;

export class QuickJsSandboxFactory implements SandboxFactory {
  private readonly workers: number;
  private readonly heapLimitBytes: number;
  private readonly clients = new Set<WorkerClient>();
  private readonly events: WorkerClientEvents;
  private nextSandboxId = 1;
  private closed = false;

  constructor(options: QuickJsSandboxFactoryOptions = {}) {
    this.workers = Math.max(1, options.workers ?? DEFAULT_WORKERS);
    this.heapLimitBytes = options.workerHeapLimitBytes ?? DEFAULT_WORKER_HEAP_LIMIT_BYTES;
    this.events = {
      onRetired: (client) => {
        if (client.sandboxes === 0) void client.terminate("Its worker was retired.");
        this.fill();
      },
      onExit: (client) => {
        this.clients.delete(client);
        if (client.ready) this.fill();
      },
    };
    this.fill();
  }

  async create(options: SandboxOptions): Promise<Sandbox> {
    if (this.closed) throw new Error("This sandbox factory was closed.");
    this.fill();
    const client = this.leastLoaded();
    const sandboxId = this.nextSandboxId++;
    client.sandboxes++;
    const release = (): void => {
      client.sandboxes--;
      if (client.retired && client.sandboxes === 0) void client.terminate("Its worker was retired.");
    };
    try {
      await client.request({ type: "create", sandboxId, options });
    } catch (error) {
      release();
      throw error;
    }
    return new QuickJsSandbox(client, sandboxId, release);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.clients].map((client) => client.terminate("The sandbox factory was closed.")));
  }

  /** Starts workers until `workers` of them take new sandboxes. */
  private fill(): void {
    if (this.closed) return;
    let taking = [...this.clients].filter((client) => !client.retired).length;
    for (; taking < this.workers; taking++) {
      this.clients.add(new WorkerClient({ heapLimitBytes: this.heapLimitBytes }, this.events));
    }
  }

  private leastLoaded(): WorkerClient {
    let best: WorkerClient | undefined;
    for (const client of this.clients) {
      if (client.retired || client.lost !== undefined) continue;
      if (best === undefined || client.sandboxes < best.sandboxes) best = client;
    }
    if (best === undefined) throw new Error("No sandbox worker is available.");
    return best;
  }
}
