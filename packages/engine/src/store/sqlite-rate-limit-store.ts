import type Database from "better-sqlite3";
import type { RateLimitStore, RateWindow, TakeOutcome } from "./rate-limit-store.js";

/**
 * `RateLimitStore` in SQLite: one row per allowed call, indexed by key and time.
 *
 * Invariants:
 * - `take` is one IMMEDIATE transaction: the write lock is held from the first count to the
 *   insert, so processes sharing the database file take places one at a time (they wait for
 *   the lock up to the connection's busy timeout).
 * - Each take also deletes its key's calls older than its longest window, so a key's log never
 *   holds more than its limits allow; `prune` clears keys no longer called.
 * - The schema is created if absent (`RATE_LIMIT_SCHEMA`); when wired into the store it becomes
 *   one of the store's numbered migrations.
 */

export const RATE_LIMIT_SCHEMA = `
  CREATE TABLE IF NOT EXISTS rate_limit_calls (
    id  INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    at  INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS rate_limit_calls_by_key ON rate_limit_calls (key, at);
`;

export class SqliteRateLimitStore implements RateLimitStore {
  readonly #take: Database.Transaction<(key: string, windows: readonly RateWindow[], now: number) => TakeOutcome>;
  readonly #prune: Database.Statement<[number]>;

  /** Uses `db` (opened by the caller, with a busy timeout when other processes share it), creating the table if absent. */
  constructor(db: Database.Database) {
    db.exec(RATE_LIMIT_SCHEMA);
    const count = db.prepare<[string, number], { n: number }>("SELECT count(*) AS n FROM rate_limit_calls WHERE key = ? AND at > ?");
    // The call whose leaving the window frees a place: the (count − limit + 1)th oldest inside it.
    const freeing = db.prepare<[string, number, number], { at: number }>(
      "SELECT at FROM rate_limit_calls WHERE key = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?",
    );
    const forget = db.prepare<[string, number]>("DELETE FROM rate_limit_calls WHERE key = ? AND at <= ?");
    const record = db.prepare<[string, number]>("INSERT INTO rate_limit_calls (key, at) VALUES (?, ?)");
    this.#prune = db.prepare<[number]>("DELETE FROM rate_limit_calls WHERE at < ?");
    this.#take = db.transaction((key: string, windows: readonly RateWindow[], now: number): TakeOutcome => {
      const longest = Math.max(...windows.map((window) => window.ms));
      forget.run(key, now - longest);
      let refusal: { retryAfterMs: number; window: RateWindow } | undefined;
      for (const window of windows) {
        const inside = count.get(key, now - window.ms)!.n;
        if (inside < window.limit) continue;
        const at = freeing.get(key, now - window.ms, inside - window.limit)!.at;
        const retryAfterMs = at + window.ms - now;
        if (refusal === undefined || retryAfterMs > refusal.retryAfterMs) refusal = { retryAfterMs, window };
      }
      if (refusal !== undefined) return { ok: false, ...refusal };
      record.run(key, now);
      return { ok: true };
    });
  }

  take(key: string, windows: readonly RateWindow[], now: number): Promise<TakeOutcome> {
    if (windows.length === 0) return Promise.resolve({ ok: true });
    // A throw (a closed database, a lock held past the busy timeout) becomes the promise's rejection.
    return new Promise((resolve) => resolve(this.#take.immediate(key, windows, now)));
  }

  prune(before: number): Promise<number> {
    return Promise.resolve(this.#prune.run(before).changes);
  }
}
