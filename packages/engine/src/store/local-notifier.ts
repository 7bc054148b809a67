/**
 * The one-machine notifier: what works for processes sharing one SQLite file. A publish in
 * this process reaches its listeners at once (on a microtask); a publish in another process
 * cannot be heard, so every listener is also called every `pollMs` and looks in the store: the
 * poll the engine always did for requests from other processes, now in one place.
 *
 * Invariants (kept by `TopicListeners`):
 * - A listener is never called inside `publish` or `subscribe` (no re-entrance), and publishes
 *   of one topic before its delivery come as one call.
 * - The poll timer runs only while something is subscribed, and is unref'd: a notifier never
 *   keeps a process up (whoever waits for something keeps it up by its own means).
 * - A listener that throws is its own fault: the others are still called.
 */
import type { Notifier } from "./notifier.js";
import { TopicListeners } from "./topic-listeners.js";

/** How often listeners look for what other processes did: "promptly" for a human or a harness, cheap for an indexed read. */
export const LOCAL_POLL_MS = 200;

export class LocalNotifier implements Notifier {
  readonly #listeners: TopicListeners;

  constructor(options: { readonly pollMs?: number } = {}) {
    this.#listeners = new TopicListeners(options.pollMs ?? LOCAL_POLL_MS);
  }

  publish(topic: string): void {
    this.#listeners.deliver(topic);
  }

  subscribe(topic: string, listener: () => void): () => void {
    return this.#listeners.subscribe(topic, listener);
  }

  close(): void {
    this.#listeners.close();
  }
}
