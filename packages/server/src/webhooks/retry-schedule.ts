/**
 * When a failed delivery is tried again: exponential backoff, capped. With the defaults the
 * attempts go out at about 0 s, 10 s, 50 s, 3.5 min, 14 min, 57 min, 3.8 h and 9.8 h after the
 * event: a receiver down for most of a working day still gets it, and an event never lingers
 * for days. Then the delivery is `failed` (kept in the log, never sent again).
 */
export interface RetrySchedule {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Wait after the first failed attempt, ms. */
  readonly baseMs: number;
  /** Each wait is this many times the one before… */
  readonly factor: number;
  /** …up to this, ms. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { maxAttempts: 8, baseMs: 10_000, factor: 4, maxDelayMs: 6 * 3600_000 };

/** How long to wait after failed attempt `attempt` (1-based) before the next; undefined when it was the last. */
export function retryDelay(schedule: RetrySchedule, attempt: number): number | undefined {
  if (attempt >= schedule.maxAttempts) return undefined;
  return Math.min(schedule.baseMs * schedule.factor ** (attempt - 1), schedule.maxDelayMs);
}
