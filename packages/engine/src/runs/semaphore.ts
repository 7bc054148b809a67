/** A counting semaphore with a FIFO queue: calls past a limit wait their turn in seq order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot to the next waiter, if any. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
