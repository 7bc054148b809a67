import type { Store } from "@tapedeck/engine";

/**
 * Whether the server's store answers, asked every `PROBE_INTERVAL_MS` (`Store.probe`, one try,
 * bounded): while it does not, `/health` and `/ready` answer 503 naming the problem and the API
 * takes no work (`ServerContext.engine()` answers 503), so a load balancer sends requests and
 * workers to another node; when it answers again, the node takes work again.
 *
 * Invariants: one probe at a time; the state changes only on a probe's answer, and each change
 * is logged once (not every probe).
 */

/** How often the store is asked: a lost database is noticed within about this long. */
export const PROBE_INTERVAL_MS = 1_000;

export class StoreHealth {
  #problem: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    private readonly store: Store,
    private readonly log: {
      readonly lost: (problem: string) => void;
      readonly back: () => void;
      /** Every probe's answer and time (for `trace`): whether the store is slow, not only whether it answers. */
      readonly probed?: (ms: number, problem: string | undefined) => void;
    },
  ) {}

  /** What is wrong with the store, as of the last probe; undefined while it answers. */
  get problem(): string | undefined {
    return this.#problem;
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#probe(), PROBE_INTERVAL_MS);
    // Never keeps the process alive: the server's socket does.
    this.#timer.unref();
  }

  async #probe(): Promise<void> {
    const started = performance.now();
    const problem = await this.store.probe().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    if (this.#stopped) return;
    this.log.probed?.(Math.round((performance.now() - started) * 10) / 10, problem);
    if (problem !== undefined && this.#problem === undefined) this.log.lost(problem);
    if (problem === undefined && this.#problem !== undefined) this.log.back();
    this.#problem = problem;
    this.#schedule();
  }
}
