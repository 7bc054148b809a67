import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { checkRateLimit, HOUR_MS, MINUTE_MS, rateLimitKey, rateWindows } from "./rate-limiter.js";
import { SqliteRateLimitStore } from "../../store/sqlite-rate-limit-store.js";
import { FixedWindowCounter, slidingWindowViolation } from "./test-support/window-check.js";

void describe("rate limits", () => {
  it("a fixed window lets twice the limit through at its edge; the sliding window does not", async () => {
    const window = { ms: MINUTE_MS, limit: 20 };
    // 20 calls in the last millisecond of a minute, 20 in the first of the next.
    const times = [...Array.from({ length: 20 }, () => MINUTE_MS - 1), ...Array.from({ length: 20 }, () => MINUTE_MS)];
    const fixed = new FixedWindowCounter(window);
    const fixedAccepted = times.filter((t) => fixed.take(t));
    assert.equal(fixedAccepted.length, 40);
    assert.equal(Math.max(...fixedAccepted) - Math.min(...fixedAccepted), 1, "all 40 within 2 ms");
    assert.match(slidingWindowViolation(fixedAccepted, [window]) ?? "", /calls accepted in the 60000 ms before 60000, more than 20/, "the property catches it");
    const store = new SqliteRateLimitStore(new Database(":memory:"));
    const sliding: number[] = [];
    for (const t of times) if ((await store.take("k", [window], t)).ok) sliding.push(t);
    assert.equal(sliding.length, 20);
    assert.equal(slidingWindowViolation(sliding, [window]), undefined);
  });

  it("a tool's rateLimit becomes a minute and an hour window per (namespace, tool), and a refusal is rate_limited with when to retry", async () => {
    assert.deepEqual(rateWindows({ perMinute: 20, perHour: 200 }), [
      { ms: MINUTE_MS, limit: 20 },
      { ms: HOUR_MS, limit: 200 },
    ]);
    assert.deepEqual(rateWindows({ perHour: 5 }), [{ ms: HOUR_MS, limit: 5 }]);
    assert.notEqual(rateLimitKey({ namespace: "a", tool: "b.c" }), rateLimitKey({ namespace: '"a","b.c"', tool: "" }));
    assert.notEqual(rateLimitKey({ namespace: undefined, tool: "t.t" }), rateLimitKey({ namespace: "null", tool: "t.t" }));
    const store = new SqliteRateLimitStore(new Database(":memory:"));
    const key = { namespace: "alice", tool: "files.write" };
    const now = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 2; i++) assert.deepEqual(await checkRateLimit(store, key, { perMinute: 2 }, now), { ok: true });
    const refused = await checkRateLimit(store, key, { perMinute: 2 }, now + 30_500);
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok);
    assert.equal(refused.retryAfterMs, 29_500);
    assert.deepEqual(refused.failure, {
      code: "rate_limited",
      message: "files.write may be called 2 times a minute for this end user, and that many calls were made: try again in 30 s (2026-01-01T00:01:00.000Z).",
      retryable: true,
      details: { retryAfterMs: 29_500, limit: 2, windowMs: MINUTE_MS },
    });
    assert.equal(
      (await checkRateLimit(store, { namespace: "bob", tool: "files.write" }, { perMinute: 2 }, now)).ok,
      true,
      "another end user has their own window",
    );
  });
});
