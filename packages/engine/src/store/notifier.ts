/**
 * The notifier seam: wake-ups between the processes that share a store. A topic names what
 * changed (the requests left for an engine, a host task queued or answered); a listener then
 * looks in the store. A notification carries nothing and may be merged with others or come
 * when nothing changed: the store is the truth, the notifier only saves waiting for a poll.
 *
 * Implementations: `LocalNotifier` (one machine: in-process at once, other processes by
 * polling); PostgreSQL will use `LISTEN`/`NOTIFY` on the store's database, with a slow poll as
 * a fallback. Contract: `contracts/notifier-contract.ts`.
 */
export interface Notifier {
  /**
   * Tells the listeners of `topic`: those of this process on a later microtask (never inside
   * this call), those of the other processes sharing the store promptly. Never throws; a
   * notification that cannot be sent is made up for by the listeners' polling.
   */
  publish(topic: string): void;
  /**
   * Calls `listener` after publishes of `topic` (a burst may come as one call), and whenever the
   * implementation cannot know whether another process published (polling): it must look in the
   * store and find out. Returns the function that stops it.
   */
  subscribe(topic: string, listener: () => void): () => void;
  /** Stops every subscription; publishing and subscribing after it do nothing. */
  close(): void;
}
