import { toolFailure, type ToolFailure } from "@tapedeck/protocol";
import type { RateLimit } from "../tool-definition.js";
import type { RateLimitStore, RateWindow } from "../../store/rate-limit-store.js";

/**
 * A tool's `rateLimit` applied to its calls: one sliding window per limit (a minute, an hour),
 * per (namespace, tool), in the shared store. Checked before approval: a call that would be
 * refused anyway does not bother an approver. Past the limit the call fails with `rate_limited`
 * and when to retry (`onLimit: "fail"`), or the caller sleeps durably for `retryAfterMs` and
 * checks again (`onLimit: "wait"`: the intake's `call.throttled` wait, `runs/rate-gate.ts`).
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

export interface RateLimitKey {
  /** The end user the call is made for; `undefined` when the run has none. */
  readonly namespace: string | undefined;
  /** `group.name`. */
  readonly tool: string;
}

export type RateCheck = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number; readonly failure: ToolFailure };

/** The windows of a rate limit. */
export function rateWindows(limit: RateLimit): RateWindow[] {
  return [
    ...(limit.perMinute === undefined ? [] : [{ ms: MINUTE_MS, limit: limit.perMinute }]),
    ...(limit.perHour === undefined ? [] : [{ ms: HOUR_MS, limit: limit.perHour }]),
  ];
}

/** The store key of a (namespace, tool): JSON, so no namespace can be spelled to collide with another's key. */
export function rateLimitKey(key: RateLimitKey): string {
  return JSON.stringify([key.namespace ?? null, key.tool]);
}

/** Takes a place for one call, or says when there will be one. */
export async function checkRateLimit(store: RateLimitStore, key: RateLimitKey, limit: RateLimit, now: number): Promise<RateCheck> {
  const taken = await store.take(rateLimitKey(key), rateWindows(limit), now);
  if (taken.ok) return taken;
  const per = taken.window.ms === MINUTE_MS ? "a minute" : taken.window.ms === HOUR_MS ? "an hour" : `${taken.window.ms} ms`;
  const who = key.namespace === undefined ? "" : " for this end user";
  const seconds = Math.ceil(taken.retryAfterMs / 1000);
  const failure = toolFailure(
    "rate_limited",
    `${key.tool} may be called ${taken.window.limit} times ${per}${who}, and that many calls were made: try again in ${seconds} s (${new Date(now + taken.retryAfterMs).toISOString()}).`,
    { retryable: true, details: { retryAfterMs: taken.retryAfterMs, limit: taken.window.limit, windowMs: taken.window.ms } },
  );
  return { ok: false, retryAfterMs: taken.retryAfterMs, failure };
}
