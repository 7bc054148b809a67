import type { Clock } from "../clock.js";

/**
 * A clock that tests move by hand: `tick(ms)` sets the time forward and fires the timers due,
 * in time order. Unlike the virtual clock it behaves like the system clock to the engine (runs
 * park), so tests see what production does, without waiting.
 */
export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  readonly #timers = new Set<{ at: number; order: number; fire: () => void }>();
  #onSet: (() => void)[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(at: number, fire: () => void): () => void {
    const timer = { at, order: this.#order++, fire };
    this.#timers.add(timer);
    for (const notify of this.#onSet.splice(0)) notify();
    return () => this.#timers.delete(timer);
  }

  /** Resolves once at least `count` timers are pending (an event, not a poll). */
  async timers(count = 1): Promise<void> {
    while (this.#timers.size < count) await new Promise<void>((resolve) => this.#onSet.push(resolve));
  }

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves the time forward by `ms` and fires every timer due by then, earliest first. */
  tick(ms: number): void {
    this.#now += ms;
    for (;;) {
      const due = [...this.#timers].filter((t) => t.at <= this.#now).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) return;
      this.#timers.delete(due);
      due.fire();
    }
  }
}
