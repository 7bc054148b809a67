/**
 * Which workers are serving host tools, for the log: a worker is *connected* at its first poll,
 * and *lost* once it has held no poll and sent no heartbeat or answer for `lostAfterMs` (it was
 * stopped, it crashed, or it cannot reach the server). Workers have no identity on the wire: one
 * is known by its key (or token's key), the tools it polls for and its toolset, so two workers
 * alike count as one, present while either is.
 *
 * Invariants:
 * - Each transition is logged once: connected, then lost, then connected again if it comes back.
 * - Nothing here holds the event loop: timers are unref'd and stopped by `close`.
 */
import type { ServerLogger } from "../logging/server-logger.js";

/** How long a worker may be silent before it is lost: a poll is held 30 s at most, and the SDK heartbeats every 20 s. */
export const WORKER_LOST_AFTER_MS = 60_000;

interface Worker {
  readonly fields: { readonly key: string; readonly tools: readonly string[]; readonly toolset?: string };
  /** Polls of this worker being held now. */
  polls: number;
  lastSeen: number;
  timer: NodeJS.Timeout | undefined;
}

export class WorkerPresence {
  readonly #workers = new Map<string, Worker>();
  readonly #logger: ServerLogger;
  readonly #lostAfterMs: number;
  readonly #now: () => number;

  constructor(options: { readonly logger: ServerLogger; readonly lostAfterMs?: number; readonly now?: () => number }) {
    this.#logger = options.logger;
    this.#lostAfterMs = options.lostAfterMs ?? WORKER_LOST_AFTER_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Workers present now (connected, not lost): for `/metrics`. */
  get size(): number {
    return this.#workers.size;
  }

  /** A poll begins; call the returned function when it ends. */
  polling(key: string, tools: readonly string[], toolset: string | undefined): () => void {
    const sorted = [...tools].sort();
    const id = JSON.stringify([key, toolset ?? null, sorted]);
    let worker = this.#workers.get(id);
    if (!worker) {
      worker = { fields: { key, tools: sorted, ...(toolset === undefined ? {} : { toolset }) }, polls: 0, lastSeen: this.#now(), timer: undefined };
      this.#workers.set(id, worker);
      this.#logger.info(worker.fields, "worker connected");
    }
    const present = worker;
    // Each poll at trace: a worker polls again as soon as a poll ends, so at debug it would drown the rest.
    this.#logger.trace({ key, tools: sorted }, "worker polls");
    present.polls++;
    clearTimeout(present.timer);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      present.polls--;
      this.#seen(present);
    };
  }

  /** A heartbeat or an answer from a worker of `key`: each of its workers is alive. */
  answered(key: string): void {
    this.#logger.trace({ key }, "worker heartbeat or answer");
    for (const worker of this.#workers.values()) if (worker.fields.key === key) this.#seen(worker);
  }

  close(): void {
    for (const worker of this.#workers.values()) clearTimeout(worker.timer);
    this.#workers.clear();
  }

  #seen(worker: Worker): void {
    worker.lastSeen = this.#now();
    clearTimeout(worker.timer);
    if (worker.polls > 0) return;
    worker.timer = setTimeout(() => this.#lost(worker), this.#lostAfterMs);
    worker.timer.unref();
  }

  #lost(worker: Worker): void {
    if (worker.polls > 0) return;
    for (const [id, known] of this.#workers) if (known === worker) this.#workers.delete(id);
    this.#logger.warn({ ...worker.fields, silentMs: this.#now() - worker.lastSeen }, "worker lost");
  }
}
