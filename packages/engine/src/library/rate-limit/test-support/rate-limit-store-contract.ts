/**
 * The behaviour every `RateLimitStore` must have. SQLite runs it (`sqlite-rate-limit-store.test.ts`);
 * a PostgreSQL store runs the same suite with its own factory.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import fc from "fast-check";
import { VirtualClock } from "../../../clock.js";
import type { RateLimitStore, RateWindow } from "../../../store/rate-limit-store.js";
import { slidingWindowViolation } from "./window-check.js";
import { freshEachTest } from "../../../test-support/fresh-each-test.js";

export interface OpenedRateLimitStore {
  readonly store: RateLimitStore;
  /** Closes this store and opens the same data again. */
  readonly reopen: () => Promise<RateLimitStore>;
  readonly close: () => Promise<void>;
}

const MINUTE: RateWindow = { ms: 60_000, limit: 3 };
const HOUR: RateWindow = { ms: 3_600_000, limit: 5 };

export function describeRateLimitStoreContract(
  name: string,
  open: () => Promise<OpenedRateLimitStore>,
  options: { readonly propertyRuns?: number } = {},
): void {
  const test = freshEachTest(open);

  void describe(`RateLimitStore contract: ${name}`, () => {
    test("allows up to the limit, then refuses with the exact wait, recording nothing it refused", async ({ store }) => {
      for (const at of [1_000, 2_000, 3_000]) assert.deepEqual(await store.take("k", [MINUTE], at), { ok: true });
      assert.deepEqual(await store.take("k", [MINUTE], 4_000), { ok: false, retryAfterMs: 57_000, window: MINUTE });
      assert.deepEqual(await store.take("k", [MINUTE], 60_999), { ok: false, retryAfterMs: 1, window: MINUTE }, "the refusal at 4 000 was not recorded");
      assert.deepEqual(await store.take("k", [MINUTE], 61_000), { ok: true }, "the call at 1 000 left the window at 61 000");
      assert.deepEqual(await store.take("k", [MINUTE], 61_000), { ok: false, retryAfterMs: 1_000, window: MINUTE });
    });

    test("every window counts: a free minute does not help when the hour is full; the wait is the longest", async ({ store }) => {
      for (let i = 0; i < 5; i++) assert.equal((await store.take("k", [MINUTE, HOUR], i * 61_000)).ok, true);
      const refused = await store.take("k", [MINUTE, HOUR], 5 * 61_000);
      assert.deepEqual(refused, { ok: false, retryAfterMs: 3_600_000 - 5 * 61_000, window: HOUR });
      assert.deepEqual(await store.take("k", [MINUTE, HOUR], 3_600_000), { ok: true });
    });

    test("keys are independent; no windows, no limit", async ({ store }) => {
      for (let i = 0; i < 3; i++) await store.take('["alice","files.write"]', [MINUTE], 0);
      assert.equal((await store.take('["alice","files.write"]', [MINUTE], 0)).ok, false);
      assert.equal((await store.take('["bob","files.write"]', [MINUTE], 0)).ok, true);
      assert.equal((await store.take('["alice","files.read"]', [MINUTE], 0)).ok, true);
      assert.equal((await store.take("k", [], 0)).ok, true);
    });

    test("calls recorded after now (a clock that went back) still count", async ({ store }) => {
      for (let i = 0; i < 3; i++) await store.take("k", [MINUTE], 100_000);
      const refused = await store.take("k", [MINUTE], 50_000);
      assert.deepEqual(refused, { ok: false, retryAfterMs: 110_000, window: MINUTE });
    });

    test("limits survive closing and reopening the store", async ({ store, reopen }) => {
      for (let i = 0; i < 3; i++) await store.take("k", [MINUTE], 10_000);
      const again = await reopen();
      assert.deepEqual(await again.take("k", [MINUTE], 20_000), { ok: false, retryAfterMs: 50_000, window: MINUTE });
    });

    test("prune forgets calls no window reaches any more, and only those", async ({ store }) => {
      await store.take("old", [MINUTE], 0);
      await store.take("new", [MINUTE], 100_000);
      await store.take("new", [MINUTE], 100_000);
      await store.take("new", [MINUTE], 100_000);
      assert.equal(await store.prune(100_000 - 60_000), 1);
      assert.equal((await store.take("new", [MINUTE], 100_001)).ok, false);
    });

    test("property, on a virtual clock: accepted calls never exceed a limit in any sliding window, refusals are exact, and so is the wait", async ({
      store,
    }) => {
      const windows = fc.uniqueArray(fc.constantFrom<RateWindow>({ ms: 1_000, limit: 2 }, { ms: 60_000, limit: 3 }, { ms: 600_000, limit: 7 }), {
        minLength: 1,
        maxLength: 3,
        selector: (w) => w.ms,
      });
      const gaps = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_500 }), fc.integer({ min: 1, max: 120_000 })), {
        minLength: 1,
        maxLength: 40,
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(windows, gaps, async (limits, steps) => {
          const key = `property-${run++}`;
          const clock = new VirtualClock(1_000_000);
          const accepted: number[] = [];
          for (const gap of steps) {
            clock.setTimer(clock.now() + gap, () => undefined);
            await clock.virtual.advance();
            const now = clock.now();
            const outcome = await store.take(key, limits, now);
            const full = (at: number) => limits.some((w) => accepted.filter((t) => t > at - w.ms).length >= w.limit);
            if (outcome.ok) {
              assert.equal(full(now), false, `accepted at ${now} although a window was full`);
              accepted.push(now);
            } else {
              assert.equal(full(now), true, `refused at ${now} although every window had a place`);
              assert.equal(full(now + outcome.retryAfterMs), false, "after retryAfterMs there is a place");
              assert.equal(full(now + outcome.retryAfterMs - 1), true, "retryAfterMs is the least wait");
            }
            assert.equal(slidingWindowViolation(accepted, limits), undefined);
          }
        }),
        { numRuns: options.propertyRuns ?? 100 },
      );
    });
  });
}
