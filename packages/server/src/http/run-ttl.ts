import { formatDuration, parseDuration } from "@tapedeck/engine";
import { ApiError } from "./api-error.js";

/**
 * A run's `ttl` as the API takes it: a duration ("30s", "10m", "2h", "30d") or milliseconds. A
 * run that has not ended when it passes is cancelled by the server's `ExpirySweeper`.
 */

/** The longest TTL: ten years is "never" for any run a model starts; past it, leave `ttl` out. */
export const MAX_TTL_MS = 10 * 365 * 86_400_000;

/** The TTL in ms; a 400 that says what to write when it is not a duration or out of range. */
export function ttlMs(value: string | number): number {
  let ms: number;
  try {
    ms = parseDuration(value, "body.ttl");
  } catch (error) {
    throw new ApiError("invalid_request", `${(error as Error).message}, or a number of milliseconds.`);
  }
  if (!(ms > 0 && ms <= MAX_TTL_MS))
    throw new ApiError(
      "invalid_request",
      `body.ttl must be longer than 0 and at most ${formatDuration(MAX_TTL_MS)}; leave it out for a run that never expires.`,
    );
  return ms;
}
