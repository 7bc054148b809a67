import assert from "node:assert/strict";
import { describe } from "node:test";
import type { ScheduleRecord, ScheduleStore } from "../schedule-store.js";
import type { Store } from "../store.js";
import { contractTest, type StoreFactory } from "./contract-test.js";

/**
 * The schedules sub-store's contract (`schedule-store.ts`): schedules kept and listed, fires
 * unique by (schedule, time), claims and takeovers that exactly one of several processes wins.
 * Public API for store implementers (`@tapedeck/engine/testing`).
 */
export function describeScheduleStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`ScheduleStore contract: ${name}`, () => {
    test("a schedule reads back as saved, is listed by namespace and labels, and is deleted with its fires", async ({ store }) => {
      const schedules = of(store);
      const a = schedule("sch_a", { namespace: "alice", labels: { team: "x" } });
      const b = schedule("sch_b", { createdAt: 2 });
      await schedules.create(a);
      await schedules.create(b);
      assert.deepEqual(await schedules.get("sch_a"), a);
      assert.equal(await schedules.get("sch_nope"), undefined);
      assert.deepEqual(
        (await schedules.list({ limit: 10 })).map((s) => s.id),
        ["sch_a", "sch_b"],
      );
      assert.deepEqual(
        (await schedules.list({ limit: 10, namespace: "alice" })).map((s) => s.id),
        ["sch_a"],
      );
      assert.deepEqual(
        (await schedules.list({ limit: 10, labels: { team: "x" } })).map((s) => s.id),
        ["sch_a"],
      );
      assert.deepEqual(
        (await schedules.list({ limit: 10, after: "sch_a" })).map((s) => s.id),
        ["sch_b"],
      );
      await assert.rejects(schedules.create(a));
      assert.equal(await schedules.addFire(fire("sch_a", 1_000)), true);
      assert.equal(await schedules.delete("sch_a"), true);
      assert.equal(await schedules.delete("sch_a"), false);
      assert.deepEqual(await schedules.fires("sch_a", { limit: 10 }), []);
    });

    test("due and earliest skip paused schedules; claimNext advances once per expected time", async ({ store }) => {
      const schedules = of(store);
      await schedules.create(schedule("sch_a", { nextFireAt: 1_000 }));
      await schedules.create(schedule("sch_p", { nextFireAt: 500, paused: true }));
      assert.deepEqual(
        (await schedules.due(999, 10)).map((s) => s.id),
        [],
      );
      assert.deepEqual(
        (await schedules.due(1_000, 10)).map((s) => s.id),
        ["sch_a"],
      );
      assert.equal(await schedules.earliestFire(), 1_000);
      assert.equal(await schedules.claimNext("sch_a", 1_000, [fire("sch_a", 1_000)], 2_000, 1_000), true);
      assert.equal(await schedules.claimNext("sch_a", 1_000, [fire("sch_a", 1_000)], 2_000, 1_000), false);
      const claimed = await schedules.get("sch_a");
      assert.equal(claimed?.nextFireAt, 2_000);
      assert.equal(claimed?.fireCount, 1);
      assert.equal(await schedules.claimNext("sch_a", 2_000, [], undefined, 2_000), true);
      assert.equal((await schedules.get("sch_a"))?.nextFireAt, undefined);
      assert.equal(await schedules.earliestFire(), undefined);
      const [only] = await schedules.fires("sch_a", { limit: 10 });
      assert.equal(only?.state, "claimed");
      assert.equal(only?.heldBy, "node-1");
    });

    test("a fire time is claimed once; its record is updated and listed newest first", async ({ store }) => {
      const schedules = of(store);
      await schedules.create(schedule("sch_a"));
      assert.equal(await schedules.addFire(fire("sch_a", 1_000)), true);
      assert.equal(await schedules.addFire(fire("sch_a", 1_000, "node-2")), false);
      assert.equal(await schedules.addFire(fire("sch_a", 2_000)), true);
      assert.deepEqual(
        (await schedules.openFires(10)).map((f) => f.fireAt),
        [1_000, 2_000],
      );
      await schedules.updateFire("sch_a", 1_000, { state: "started", runId: "run_1" }, 1_500);
      await schedules.updateFire("sch_a", 2_000, { state: "skipped", reason: "overlap" }, 2_500);
      const fires = await schedules.fires("sch_a", { limit: 10 });
      assert.deepEqual(
        fires.map((f) => [f.fireAt, f.state, f.runId, f.reason]),
        [
          [2_000, "skipped", undefined, "overlap"],
          [1_000, "started", "run_1", undefined],
        ],
      );
      assert.deepEqual(
        (await schedules.fires("sch_a", { limit: 10, states: ["started"] })).map((f) => f.fireAt),
        [1_000],
      );
      assert.deepEqual(
        (await schedules.fires("sch_a", { limit: 10, before: 2_000 })).map((f) => f.fireAt),
        [1_000],
      );
      assert.deepEqual(await schedules.openFires(10), []);
    });

    test("a stale fire is taken over by one taker", async ({ store }) => {
      const schedules = of(store);
      await schedules.create(schedule("sch_a"));
      await schedules.addFire(fire("sch_a", 1_000));
      const [open] = await schedules.openFires(1);
      const takes = await Promise.all([
        schedules.takeFire("sch_a", 1_000, open!, "node-2", 50_000),
        schedules.takeFire("sch_a", 1_000, open!, "node-3", 50_000),
      ]);
      assert.deepEqual(takes.filter(Boolean).length, 1);
      const [taken] = await schedules.openFires(1);
      assert.equal(taken?.claimedAt, 50_000);
      assert.ok(taken?.heldBy === "node-2" || taken?.heldBy === "node-3");
    });

    test("two processes claiming the same due time: exactly one wins", async ({ store, peer }, t) => {
      if (!peer) return t.skip("this store cannot be opened twice");
      const other = await peer();
      try {
        await of(store).create(schedule("sch_a", { nextFireAt: 1_000 }));
        for (let at = 1_000; at < 11_000; at += 1_000) {
          const claims = await Promise.all([store, other].map((s, i) => of(s).claimNext("sch_a", at, [fire("sch_a", at, `node-${i}`)], at + 1_000, at)));
          assert.equal(claims.filter(Boolean).length, 1, `one claim of ${at}`);
        }
        const fires = await of(other).fires("sch_a", { limit: 100 });
        assert.equal(fires.length, 10);
        assert.equal((await of(store).get("sch_a"))?.fireCount, 10);
      } finally {
        await other.close();
      }
    });
  });
}

function of(store: Store): ScheduleStore {
  assert.ok(store.schedules, "the store keeps schedules");
  return store.schedules;
}

function schedule(id: string, more: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id,
    timing: { cron: "0 * * * *", timezone: "Europe/Berlin" },
    action: { toolset: "ts_x", source: "export default () => 1", input: { n: 1 } },
    policies: { overlap: "skip", catchup: "latest", catchupWindowMs: 60_000 },
    paused: false,
    fireCount: 0,
    createdAt: 1,
    updatedAt: 1,
    ...more,
  };
}

function fire(scheduleId: string, fireAt: number, heldBy = "node-1") {
  return { scheduleId, fireAt, kind: "scheduled" as const, heldBy, claimedAt: fireAt };
}
