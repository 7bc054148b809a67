/** A counting semaphore with a FIFO queue: calls past a limit wait their turn in seq order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /**
   * Takes a slot now if one is free; `false` if the caller must wait with `acquire`. A free
   * slot means nobody waits (`release` hands slots straight to waiters), so FIFO holds.
   */
  tryAcquire(): boolean {
    if (this.active >= this.limit) return false;
    this.active++;
    return true;
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot to the next waiter, if any. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
