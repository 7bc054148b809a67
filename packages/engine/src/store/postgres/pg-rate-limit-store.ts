import type { RateLimitStore, RateWindow, TakeOutcome } from "../rate-limit-store.js";
import type { PgAccess, PgTransaction } from "./pg-access.js";

/**
 * `RateLimitStore` in the PostgreSQL store's database (`rate_limit_calls`, PostgreSQL migration 3):
 * one row per allowed call, so every node on the database counts the same calls.
 *
 * Invariants:
 * - `take` is one write of the store's group commit, holding a transaction-scoped advisory lock
 *   of its key from the first count to the insert: two nodes taking the last place of one key
 *   queue on the lock, and the second counts the first's call. (Keys whose hashes collide only
 *   wait for each other.)
 * - Each take deletes its key's calls older than its longest window, as SQLite's does; `prune`
 *   clears keys no longer called.
 */
export class PgRateLimitStore implements RateLimitStore {
  readonly #access: PgAccess;

  constructor(access: PgAccess) {
    this.#access = access;
  }

  take(key: string, windows: readonly RateWindow[], now: number): Promise<TakeOutcome> {
    if (windows.length === 0) return Promise.resolve({ ok: true });
    return this.#access.write((tx) => takePlace(tx, key, windows, now));
  }

  prune(before: number): Promise<number> {
    return this.#access.write(async (tx) => (await tx.query("DELETE FROM rate_limit_calls WHERE at < $1", [before])).rowCount ?? 0);
  }
}

async function takePlace(tx: PgTransaction, key: string, windows: readonly RateWindow[], now: number): Promise<TakeOutcome> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`tapedeck-rate-limit:${key}`]);
  const longest = Math.max(...windows.map((window) => window.ms));
  await tx.query("DELETE FROM rate_limit_calls WHERE key = $1 AND at <= $2", [key, now - longest]);
  let refusal: { retryAfterMs: number; window: RateWindow } | undefined;
  for (const window of windows) {
    const [counted] = (await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM rate_limit_calls WHERE key = $1 AND at > $2", [key, now - window.ms]))
      .rows;
    const inside = counted?.n ?? 0;
    if (inside < window.limit) continue;
    // The call whose leaving the window frees a place: the (count − limit + 1)th oldest inside it.
    const [freeing] = (
      await tx.query<{ at: string }>("SELECT at FROM rate_limit_calls WHERE key = $1 AND at > $2 ORDER BY at LIMIT 1 OFFSET $3", [
        key,
        now - window.ms,
        inside - window.limit,
      ])
    ).rows;
    const retryAfterMs = Number(freeing!.at) + window.ms - now;
    if (refusal === undefined || retryAfterMs > refusal.retryAfterMs) refusal = { retryAfterMs, window };
  }
  if (refusal !== undefined) return { ok: false, ...refusal };
  await tx.query("INSERT INTO rate_limit_calls (key, at) VALUES ($1, $2)", [key, now]);
  return { ok: true };
}
