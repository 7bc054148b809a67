/**
 * The notifier of the PostgreSQL store: `LISTEN`/`NOTIFY` on the store's database, so that a
 * publish on any node reaches every node's listeners in about a millisecond, with a slow poll
 * as the fallback for what a lost connection made them miss.
 *
 * Invariants:
 * - One channel per schema (`tapedeck_<schema>`): stores of other schemas in the same database
 *   never wake this one's listeners. The topic is the payload, prefixed by the publishing
 *   notifier's id, so that a notifier skips its own publishes (delivered in-process at once).
 * - A publish reaches this process's listeners on a microtask (never inside `publish`), and is
 *   sent to the database on the pool; a send that fails is dropped (the listeners' poll makes up
 *   for it: the store is the truth).
 * - The listening connection is one of its own (not the pool's). When it is lost it is opened
 *   again with backoff, and once listening again every listener is called: what was published
 *   meanwhile was missed.
 * - Listeners are also called every `pollMs` (unref'd timer, only while something is
 *   subscribed): a notifier never keeps a process up.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Notifier } from "../notifier.js";
import { connectionConfig } from "./pg-connection.js";
import type { PostgresLocation } from "./pg-location.js";
import { backoffDelay } from "./pg-retry.js";

/** How often listeners look in the store anyway: NOTIFY does the prompt work, this only covers a lost connection's gap. */
export const PG_POLL_MS = 5_000;

export class PgNotifier implements Notifier {
  readonly #location: PostgresLocation;
  readonly #send: (text: string, values: unknown[]) => Promise<unknown>;
  readonly #channel: string;
  readonly #id = randomBytes(6).toString("base64url");
  readonly #pollMs: number;
  readonly #listeners = new Map<string, Set<() => void>>();
  readonly #due = new Set<string>();
  #flushing = false;
  #timer: NodeJS.Timeout | undefined;
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #reconnect: NodeJS.Timeout | undefined;
  #attempt = 0;
  #closed = false;

  /** `send` runs a statement on the store's pool (the NOTIFY of a publish). */
  constructor(location: PostgresLocation, send: (text: string, values: unknown[]) => Promise<unknown>, options: { readonly pollMs?: number } = {}) {
    this.#location = location;
    this.#send = send;
    this.#channel = `tapedeck_${location.schema}`;
    this.#pollMs = options.pollMs ?? PG_POLL_MS;
  }

  /** Resolves once the notifier listens (the store waits for it when it opens, so that no publish made after is missed). */
  listen(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  publish(topic: string): void {
    if (this.#closed) return;
    this.#deliver(topic);
    this.#send("SELECT pg_notify($1, $2)", [this.#channel, `${this.#id} ${topic}`]).catch(() => {
      // Dropped: the other processes' polls make up for it.
    });
  }

  subscribe(topic: string, listener: () => void): () => void {
    if (this.#closed) return () => {};
    // Wrapped: the same function subscribed twice is two subscriptions, each stopped alone.
    const own = (): void => listener();
    let listeners = this.#listeners.get(topic);
    if (!listeners) this.#listeners.set(topic, (listeners = new Set()));
    listeners.add(own);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#callAll(), this.#pollMs);
      this.#timer.unref();
    }
    return () => {
      const set = this.#listeners.get(topic);
      if (!set?.delete(own)) return;
      if (set.size === 0) this.#listeners.delete(topic);
      if (this.#listeners.size === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.#due.clear();
    clearInterval(this.#timer);
    clearTimeout(this.#reconnect);
    const client = this.#client;
    this.#client = undefined;
    client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client(connectionConfig(this.#location));
    client.on("notification", (message) => this.#heard(message.payload));
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      client.removeAllListeners("end");
      client.end().catch(() => undefined);
      if (this.#attempt === 0) throw error;
      this.#scheduleReconnect();
      return;
    }
    if (this.#closed) {
      client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    // Back after a gap: whatever was published meanwhile was missed, so everyone looks.
    if (this.#attempt > 0) this.#callAll();
    this.#attempt = 0;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    if (!this.#closed) this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#reconnect !== undefined) return;
    this.#attempt++;
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      void this.listen().catch(() => this.#scheduleReconnect());
    }, backoffDelay(this.#attempt));
    this.#reconnect.unref();
  }

  #heard(payload: string | undefined): void {
    if (payload === undefined) return;
    const space = payload.indexOf(" ");
    if (space < 0 || payload.slice(0, space) === this.#id) return;
    this.#deliver(payload.slice(space + 1));
  }

  #deliver(topic: string): void {
    if (this.#closed || !this.#listeners.has(topic)) return;
    this.#due.add(topic);
    if (this.#flushing) return;
    this.#flushing = true;
    queueMicrotask(() => {
      this.#flushing = false;
      const topics = [...this.#due];
      this.#due.clear();
      for (const due of topics) this.#call(due);
    });
  }

  #callAll(): void {
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
}
