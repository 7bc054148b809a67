/**
 * The engine's only source of time. Real runs use `systemClock`; `test_script` uses a
 * `VirtualClock` that jumps over sleeps. Journal timestamps come from here, and the sandbox's
 * `Date` comes from the journal, so a script never reads a clock directly.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fire` once `now() >= at`; returns a function that cancels it. A timer keeps the process alive (the engine cancels its own on close). */
  setTimer(at: number, fire: () => void): () => void;
  /** Set on a virtual clock: time moves only when the engine, idle, asks it to. */
  readonly virtual?: VirtualTime;
}

/** What an idle engine does with a virtual clock. */
export interface VirtualTime {
  /**
   * Jumps to the earliest timer and fires every timer due then; resolves once what they
   * started has settled (each timer may return a promise). False when no timer is set.
   */
  advance(): Promise<boolean>;
}

/** Node's timers take at most 2^31 - 1 ms; longer waits are re-armed in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(at, fire) {
    let timer: NodeJS.Timeout;
    const arm = (): void => {
      const delay = at - Date.now();
      if (delay > MAX_TIMEOUT_MS) timer = setTimeout(arm, MAX_TIMEOUT_MS);
      else timer = setTimeout(fire, Math.max(0, delay));
    };
    arm();
    return () => clearTimeout(timer);
  },
};

interface VirtualTimer {
  readonly at: number;
  readonly order: number;
  readonly fire: () => unknown;
}

/**
 * A clock that stands still until `advance()`: a year of sleeps passes in one call. Timers due
 * at the same time fire in the order they were set.
 */
export class VirtualClock implements Clock {
  #now: number;
  #order = 0;
  readonly #timers = new Set<VirtualTimer>();
  readonly virtual: VirtualTime = { advance: () => this.#advance() };

  constructor(start: number) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(at: number, fire: () => unknown): () => void {
    const timer: VirtualTimer = { at, order: this.#order++, fire };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }

  /** The time of the earliest timer, if any. */
  get nextAt(): number | undefined {
    let next: number | undefined;
    for (const timer of this.#timers) if (next === undefined || timer.at < next) next = timer.at;
    return next;
  }

  async #advance(): Promise<boolean> {
    const next = this.nextAt;
    if (next === undefined) return false;
    this.#now = Math.max(this.#now, next);
    const due = [...this.#timers].filter((t) => t.at <= this.#now).sort((a, b) => a.order - b.order);
    for (const timer of due) this.#timers.delete(timer);
    for (const timer of due) await timer.fire();
    return true;
  }
}
