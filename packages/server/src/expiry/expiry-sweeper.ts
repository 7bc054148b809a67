import { formatDuration, type Engine } from "@tapedeck/engine";

/**
 * Cancels the runs whose TTL has passed (`expiresAt`, set from a start's `ttl`): a run a model
 * started and nobody follows any more must not wait for a signal forever.
 *
 * Invariants:
 * - Only runs that have not ended are touched, through `Engine.cancel` (journaled as any cancel,
 *   with the reason "expired: its ttl of 30d passed"); nothing is deleted.
 * - A sweep reads expired runs soonest first, a batch at a time, and visits each run once: a
 *   run another process holds is asked to cancel and not asked again in the same sweep.
 * - One sweep at a time. A run that cannot be cancelled is logged and the sweep goes on; the
 *   next sweep tries it again.
 */

/** How often the server sweeps: a TTL is days long, so a minute late is on time. */
export const SWEEP_INTERVAL_MS = 60_000;

/** Until the engine opens, the first sweep is tried this often: it runs as soon as the server can. */
const STARTING_RETRY_MS = 1_000;

/** Expired runs read per query: bounds one read, not a sweep. */
const SWEEP_BATCH = 100;

export interface ExpirySweeperOptions {
  /** The engine, once the server has one; undefined while it starts or stops (nothing is swept). */
  readonly engine: () => Engine | undefined;
  /** Where faults go (a run that could not be cancelled); the sweeps go on. */
  readonly log: (line: string) => void;
  /** The time a timed sweep uses. Default `Date.now`. */
  readonly now?: () => number;
}

export class ExpirySweeper {
  readonly #options: ExpirySweeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(options: ExpirySweeperOptions) {
    this.#options = options;
  }

  /** Sweeps as soon as the engine is open, then every `SWEEP_INTERVAL_MS`, until `stop`. */
  start(): void {
    this.#schedule(0);
  }

  /** Stops the timer and waits for a sweep in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#sweeping;
  }

  /**
   * Cancels every run not ended whose `expiresAt` is at or before `now`; resolves with the ids
   * of those cancelled (or asked to cancel, when another process holds them). Nothing without
   * an engine.
   */
  sweep(now: number = (this.#options.now ?? Date.now)()): Promise<string[]> {
    const swept = this.#sweeping.then(() => this.#sweep(now));
    this.#sweeping = swept.catch(() => {});
    return swept;
  }

  async #sweep(now: number): Promise<string[]> {
    const engine = this.#options.engine();
    if (!engine) return [];
    const visited = new Set<string>();
    const cancelled: string[] = [];
    for (;;) {
      const due = (await engine.listRuns({ expiredBy: now, limit: SWEEP_BATCH + visited.size })).filter((run) => !visited.has(run.id));
      if (due.length === 0) return cancelled;
      for (const run of due) {
        visited.add(run.id);
        const ttl = formatDuration((run.expiresAt ?? now) - run.createdAt);
        try {
          if ((await engine.cancel(run.id, `expired: its ttl of ${ttl} passed`)).status === "cancelled") cancelled.push(run.id);
        } catch (error) {
          this.#options.log(
            `tapedeck: run ${run.id} expired but could not be cancelled (the next sweep tries again): ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), ms);
    // The sweeper never keeps a process alive: the server's socket (or the embedding program) does.
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    const open = this.#options.engine() !== undefined;
    if (open) {
      await this.sweep().catch((error: unknown) =>
        this.#options.log(`tapedeck: sweeping expired runs failed (retried in a minute): ${error instanceof Error ? error.message : String(error)}`),
      );
    }
    this.#schedule(open ? SWEEP_INTERVAL_MS : STARTING_RETRY_MS);
  }
}
