/**
 * Runs `step` when woken, never two at once: a wake during a step runs one more step after it
 * (wakes merge), so a burst of notifications costs one read of the store per step in flight.
 * `step` failing calls `failed` and stops the waking.
 */
export class SerialWake {
  readonly #step: () => Promise<void>;
  readonly #failed: (error: unknown) => void;
  #busy = false;
  #again = false;
  #stopped = false;

  constructor(step: () => Promise<void>, failed: (error: unknown) => void) {
    this.#step = step;
    this.#failed = failed;
  }

  wake(): void {
    if (this.#stopped) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
  }

  async #run(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.#step();
      } while (this.#again && !this.#stopped);
    } catch (error) {
      this.#stopped = true;
      this.#failed(error);
    } finally {
      this.#busy = false;
    }
  }
}
