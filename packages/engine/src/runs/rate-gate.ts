import { toolFailure, type PinnedTool } from "@tapedeck/protocol";
import { checkRateLimit, MINUTE_MS, rateLimitKey, type RateCheck } from "../library/rate-limit/rate-limiter.js";
import type { RateLimitStore } from "../store/rate-limit-store.js";

/**
 * The rate limit of a call's tool, applied at intake once the call is scheduled and before it
 * goes on — to its approval (a call that would be refused anyway never bothers an approver) or
 * to its tool. The window is the store's (`Store.rateLimits`), so every process on a data folder
 * counts the same calls, and a restart forgets none.
 *
 * Invariants:
 * - Only a call just issued (or throttled, at its `until`) is checked: a resumed one (its journal
 *   has it) was checked when it was issued, and a refused one has its `rate_limited` failure in the journal, which replay returns.
 * - A call whose place is taken counts even if the engine stops before sending it: the window errs
 *   toward fewer calls, never more.
 * - A store that keeps no windows refuses the calls of a limited tool, saying so: a limit is
 *   never silently ignored.
 * - With `onLimit: "wait"` a call past the limit does not fail: the intake journals
 *   `call.throttled` (until when) and waits like a sleep, then checks again (`CallIntake.#throttle`);
 *   once it has its place, `call.admitted` is journaled before it goes on, so a resumed call is
 *   not checked a second time. A store without windows still fails the call (it would wait forever).
 */

/**
 * Whether a call of `tool` may go on now, for `namespace` (the run's end user): its tool's rate
 * limit first, then the namespace's quota of calls per minute (`namespaceCallsPerMinute`, every
 * tool's calls of the end user's runs and sessions, one window in the store shared by nodes).
 */
export async function admitCall(
  store: RateLimitStore | undefined,
  tool: PinnedTool,
  path: string,
  namespace: string | undefined,
  now: number,
  namespaceCallsPerMinute?: number,
): Promise<RateCheck> {
  const own = await toolLimit(store, tool, path, namespace, now);
  if (!own.ok || namespaceCallsPerMinute === undefined || namespace === undefined) return own;
  if (store === undefined) {
    const failure = toolFailure(
      "tool_error",
      `This server limits each end user's calls per minute, and its store keeps no rate-limit windows, so the call was not sent.`,
    );
    return { ok: false, retryAfterMs: 0, failure };
  }
  const taken = await store.take(rateLimitKey({ namespace, tool: NAMESPACE_CALLS }), [{ ms: MINUTE_MS, limit: namespaceCallsPerMinute }], now);
  if (taken.ok) return taken;
  const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
  const failure = toolFailure(
    "rate_limited",
    `Quota exceeded: end user ${JSON.stringify(namespace)} may make ${namespaceCallsPerMinute} tool calls per minute, and has; ${path} was not called. Try again in ${seconds} s, or make fewer calls.`,
    { retryable: true, details: { retryAfterMs: taken.retryAfterMs, limit: namespaceCallsPerMinute, windowMs: MINUTE_MS, quota: "callsPerMinute" } },
  );
  return { ok: false, retryAfterMs: taken.retryAfterMs, failure };
}

/** The window of a namespace's quota of calls: a name no tool can have (`tapedeck.*` is the engine's). */
const NAMESPACE_CALLS = "tapedeck.quota.calls";

function toolLimit(store: RateLimitStore | undefined, tool: PinnedTool, path: string, namespace: string | undefined, now: number): Promise<RateCheck> {
  const limit = tool.policy.rateLimit;
  if (limit === undefined) return Promise.resolve({ ok: true });
  if (store === undefined) {
    const failure = toolFailure(
      "tool_error",
      `${path} has a rate limit, and this engine's store keeps no rate-limit windows, so the call was not sent. Use a store that keeps them (SQLite), or remove the tool's rateLimit.`,
    );
    return Promise.resolve({ ok: false, retryAfterMs: 0, failure });
  }
  return checkRateLimit(store, { namespace, tool: path }, limit, now);
}
