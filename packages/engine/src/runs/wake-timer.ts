import type { Clock } from "../clock.js";

/**
 * One timer for all parked runs: armed for the earliest `wakeAt`, it asks the engine to wake
 * the runs that are due, then re-arms for the next. Ten thousand sleeping runs cost one timer.
 */
export class WakeTimer {
  #at: number | undefined;
  #cancel: (() => void) | undefined;
  #stopped = false;

  constructor(
    private readonly clock: Clock,
    /** Wakes the runs due at `now` and resolves with the next `wakeAt` of a waiting run. */
    private readonly wakeDue: (now: number) => Promise<number | undefined>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Makes sure the timer fires no later than `at`. */
  schedule(at: number | undefined): void {
    if (at === undefined || this.#stopped) return;
    if (this.#at !== undefined && this.#at <= at) return;
    this.#cancel?.();
    this.#at = at;
    this.#cancel = this.clock.setTimer(at, () => this.#fire());
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
    this.#at = undefined;
  }

  #fire(): void {
    this.#cancel = undefined;
    this.#at = undefined;
    this.wakeDue(this.clock.now()).then(
      (next) => this.schedule(next),
      (error: unknown) => this.onError(error),
    );
  }
}
