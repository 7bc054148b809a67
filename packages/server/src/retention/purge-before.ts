import { parseDuration } from "@tapedeck/protocol";

/**
 * The time a purge's `before` names, ms since the epoch: an ISO 8601 time ("2026-01-01",
 * "2026-01-01T00:00:00Z"), or a duration back from `now` ("30d": what ended more than 30 days
 * ago). Throws a `TypeError` saying what is accepted; a time in the future is refused too, since a
 * purge "before tomorrow" would take every ended run by a slip of the finger.
 */
export function purgeBefore(value: string, now: number): number {
  let at: number;
  try {
    at = now - parseDuration(value, "before");
  } catch {
    at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  }
  if (!Number.isFinite(at)) {
    throw new TypeError(`before "${value}" is neither a time nor a duration: write an ISO time ("2026-01-31T00:00:00Z") or how long ago ("30d", "12h")`);
  }
  if (at > now) throw new TypeError(`before "${value}" is in the future: a purge takes only what ended before a time that has passed`);
  return at;
}
