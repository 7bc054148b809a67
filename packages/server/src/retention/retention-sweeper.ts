/**
 * Retention (`tapedeck serve --retention 30d`): a background sweep deletes what ended longer ago
 * than the retention period — runs whole, idle direct sessions, done webhook deliveries — through
 * `purgeEnded`, in bounded batches.
 *
 * Invariants:
 * - Only ended runs (and sessions no engine holds, none of whose calls waits for a decision) are
 *   deleted: `store/purge-store.ts` decides, in the commit that deletes.
 * - One sweep at a time; a sweep's turn takes at most `TURN_BATCHES` batches, then yields the
 *   timer queue and goes on at once if there was more: a backlog of millions never holds the
 *   store or the event loop for long, and every node on a store may sweep (each batch re-reads).
 * - A fault (the store away) is logged and the next sweep, one interval later, tries again: the
 *   timer is re-armed whatever a turn did, and a turn never rejects.
 * - `stop` clears the timer and waits for the turn in flight (at most `TURN_BATCHES` batches):
 *   nothing touches the store after it resolves.
 */
import { formatDuration, type Engine } from "@tapedeck/engine";
import type { WebhookOutboxStore } from "../store/webhook-outbox-store.js";
import { purgeEnded } from "./purge-ended.js";

/** How often the sweep looks: a retention is days long, so a minute late is on time. */
export const RETENTION_SWEEP_MS = 60_000;

/** Batches per turn of a sweep (`PURGE_BATCH_SIZE` runs each): about a second of work at most. */
export const TURN_BATCHES = 20;

export interface RetentionSweeperOptions {
  /** The engine, once the server has one; undefined while it starts or stops. */
  readonly engine: () => Engine | undefined;
  readonly outbox: WebhookOutboxStore;
  /** What ended longer ago than this is deleted, ms. */
  readonly retentionMs: number;
  /** Between two sweeps, ms. Default `RETENTION_SWEEP_MS`. */
  readonly intervalMs?: number;
  /** A turn that deleted something says what (the sweep's event, which tests await). */
  readonly info: (line: string) => void;
  /** A turn that failed says why; the next interval tries again. */
  readonly error: (line: string) => void;
  readonly now?: () => number;
}

export class RetentionSweeper {
  readonly #options: RetentionSweeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(options: RetentionSweeperOptions) {
    this.#options = options;
  }

  /** Sweeps now (once the engine is open), then every interval, until `stop`. */
  start(): void {
    this.#schedule(0);
  }

  /** Stops the timer and waits for the turn in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#sweeping;
  }

  get #intervalMs(): number {
    return this.#options.intervalMs ?? RETENTION_SWEEP_MS;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      const turn = this.#turn();
      this.#sweeping = turn;
      void turn.then((more) => this.#schedule(more ? 0 : this.#intervalMs));
    }, ms);
    // The sweep alone never keeps a process alive (the server's listener does).
    this.#timer.unref();
  }

  /** One turn; resolves true when more is left to delete now. Never rejects. */
  async #turn(): Promise<boolean> {
    const engine = this.#options.engine();
    if (engine === undefined || this.#stopped) return false;
    const before = (this.#options.now ?? Date.now)() - this.#options.retentionMs;
    try {
      const result = await purgeEnded(engine, this.#options.outbox, { before, maxBatches: TURN_BATCHES });
      if (result.runs + result.sessions + result.deliveries > 0) {
        this.#options.info(
          `retention (${formatDuration(this.#options.retentionMs)}): purged ${result.runs} run(s), ${result.sessions} session(s) and ${result.deliveries} webhook deliveries ended before ${new Date(before).toISOString()}`,
        );
      }
      return !result.complete && !this.#stopped;
    } catch (error) {
      this.#options.error(
        `retention sweep failed (tried again in ${formatDuration(this.#intervalMs)}): ${error instanceof Error ? error.message : String(error)}`,
      );
      return false;
    }
  }
}
