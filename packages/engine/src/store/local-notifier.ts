/**
 * The one-machine notifier: what works for processes sharing one SQLite file. A publish in
 * this process reaches its listeners at once (on a microtask); a publish in another process
 * cannot be heard, so every listener is also called every `pollMs` and looks in the store: the
 * poll the engine always did for requests from other processes, now in one place.
 *
 * Invariants:
 * - A listener is never called inside `publish` or `subscribe` (no re-entrance), and publishes
 *   of one topic before its delivery come as one call.
 * - The poll timer runs only while something is subscribed, and is unref'd: a notifier never
 *   keeps a process up (whoever waits for something keeps it up by its own means).
 * - A listener that throws is its own fault: the others are still called.
 */
import type { Notifier } from "./notifier.js";

/** How often listeners look for what other processes did: "promptly" for a human or a harness, cheap for an indexed read. */
export const LOCAL_POLL_MS = 200;

export class LocalNotifier implements Notifier {
  readonly #listeners = new Map<string, Set<() => void>>();
  readonly #due = new Set<string>();
  readonly #pollMs: number;
  #timer: NodeJS.Timeout | undefined;
  #flushing = false;
  #closed = false;

  constructor(options: { readonly pollMs?: number } = {}) {
    this.#pollMs = options.pollMs ?? LOCAL_POLL_MS;
  }

  publish(topic: string): void {
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
      this.#timer = setInterval(() => this.#poll(), this.#pollMs);
      this.#timer.unref();
    }
    return () => {
      const set = this.#listeners.get(topic);
      if (!set?.delete(own)) return;
      if (set.size === 0) this.#listeners.delete(topic);
      if (this.#listeners.size === 0) this.#stopTimer();
    };
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

  /** Another process may have published anything: every listener looks. */
  #poll(): void {
    for (const topic of [...this.#listeners.keys()]) this.#call(topic);
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
