/**
 * A process's own listeners of a notifier's topics: what `LocalNotifier` and `PgNotifier` share,
 * whatever carries their publishes between processes.
 *
 * Invariants:
 * - A listener is never called inside `deliver` or `subscribe` (no re-entrance): deliveries come
 *   on a microtask, and deliveries of one topic before it come as one call.
 * - Every listener is also called every `pollMs`, by a timer that runs only while something is
 *   subscribed and is unref'd: listeners never keep a process up.
 * - A listener that throws is its own fault: the others are still called.
 * - After `close` nothing is called again and `subscribe` does nothing.
 */
export class TopicListeners {
  readonly #listeners = new Map<string, Set<() => void>>();
  readonly #due = new Set<string>();
  readonly #pollMs: number;
  #timer: NodeJS.Timeout | undefined;
  #flushing = false;
  #closed = false;

  constructor(pollMs: number) {
    this.#pollMs = pollMs;
  }

  /** Calls the listeners of `topic` on a later microtask (none if nothing listens to it). */
  deliver(topic: string): void {
    if (this.#closed || !this.#listeners.has(topic)) return;
    this.#due.add(topic);
    if (this.#flushing) return;
    this.#flushing = true;
    queueMicrotask(() => this.#flush());
  }

  subscribe(topic: string, listener: () => void): () => void {
    if (this.#closed) return () => {};
    // Wrapped: the same function subscribed twice is two subscriptions, each stopped alone.
    const own = (): void => listener();
    let listeners = this.#listeners.get(topic);
    if (!listeners) this.#listeners.set(topic, (listeners = new Set()));
    listeners.add(own);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.callAll(), this.#pollMs);
      this.#timer.unref();
    }
    return () => {
      const set = this.#listeners.get(topic);
      if (!set?.delete(own)) return;
      if (set.size === 0) this.#listeners.delete(topic);
      if (this.#listeners.size === 0) this.#stopTimer();
    };
  }

  /** Something may have been published that this process could not hear: every listener looks. */
  callAll(): void {
    for (const topic of [...this.#listeners.keys()]) this.#call(topic);
  }

  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.#due.clear();
    this.#stopTimer();
  }

  #flush(): void {
    this.#flushing = false;
    const topics = [...this.#due];
    this.#due.clear();
    for (const topic of topics) this.#call(topic);
  }

  #call(topic: string): void {
    for (const listener of [...(this.#listeners.get(topic) ?? [])]) {
      try {
        listener();
      } catch {
        // A listener's fault is its own; the others still hear.
      }
    }
  }

  #stopTimer(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
