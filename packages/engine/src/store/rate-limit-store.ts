/**
 * The rate-limit sub-store: a sliding log of the calls each key (a namespace and a tool)
 * was allowed, shared by every process on a data folder (SQLite, `sqlite-rate-limit-store.ts`)
 * and, later, every node on one PostgreSQL database. Limits are small (tens a minute, hundreds
 * an hour), so the log is exact: no counter approximates a window.
 *
 * Invariants every implementation keeps (the contract suite, `test-support/rate-limit-store-
 * contract.ts`, checks them, including a property test on a virtual clock):
 * - `take` is atomic (one transaction): it records a call at `now` only if, for every window,
 *   fewer than `limit` calls are recorded in (now − ms, now]; two takers never both get the last
 *   place. Calls recorded after `now` (a clock that went back) count as inside the window.
 * - A refused call records nothing, and says when a place frees: `retryAfterMs` is the least
 *   wait after which every window would accept (exact, not an estimate).
 * - What is recorded survives closing and reopening the store.
 */

export interface RateWindow {
  /** Length of the sliding window, ms. */
  readonly ms: number;
  /** Calls allowed in any window of that length. */
  readonly limit: number;
}

export type TakeOutcome =
  /** Allowed, and recorded. */
  | { readonly ok: true }
  /** Refused, nothing recorded: `window` is full (the one that frees last), and every window has a place after `retryAfterMs`. */
  | { readonly ok: false; readonly retryAfterMs: number; readonly window: RateWindow };

export interface RateLimitStore {
  take(key: string, windows: readonly RateWindow[], now: number): Promise<TakeOutcome>;
  /** Forgets calls recorded before `before` (no window reaches back that far any more); answers how many. */
  prune(before: number): Promise<number>;
}
