import type { ToolRateLimit } from "@tapedeck/protocol";

/**
 * What a rate limit may say, wherever it is written (a library tool's definition, a toolset's
 * policy): each problem names its field, so a malformed limit is refused where it was written.
 */

/** Most calls a rate limit may allow per window: beyond it, it is no limit, and the log would be large. */
export const MAX_RATE_LIMIT = 100_000;

const KEYS = ["perMinute", "perHour", "onLimit"];

/** What is wrong with `limit` (empty when nothing is), each naming the field (`rateLimit.perMinute: …`). */
export function rateLimitProblems(limit: ToolRateLimit | undefined, where = "rateLimit"): string[] {
  if (limit === undefined) return [];
  if (typeof limit !== "object" || limit === null || Array.isArray(limit))
    return [`${where} must be an object: { "perMinute": 20, "perHour": 200, "onLimit": "fail" }`];
  const problems: string[] = [];
  for (const key of Object.keys(limit)) if (!KEYS.includes(key)) problems.push(`${where} has an unknown key "${key}"; allowed keys: ${KEYS.join(", ")}`);
  for (const field of ["perMinute", "perHour"] as const) {
    const value = limit[field];
    if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= MAX_RATE_LIMIT)) {
      problems.push(`${where}.${field}: ${String(value)} is not a whole number from 1 to ${MAX_RATE_LIMIT}`);
    }
  }
  if (limit.perMinute === undefined && limit.perHour === undefined) problems.push(`${where}: give perMinute, perHour or both (or leave rateLimit out)`);
  if (limit.onLimit !== undefined && limit.onLimit !== "fail" && limit.onLimit !== "wait")
    problems.push(`${where}.onLimit: "${limit.onLimit as string}" is not fail or wait`);
  return problems;
}
