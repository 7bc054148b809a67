import assert from "node:assert/strict";
import { describe } from "node:test";
import { GIVEN_UP_UNTIL, runRequestsTopic } from "../lease-store.js";
import { contractTest, eventually, type StoreFactory } from "./contract-test.js";
import { log, newRun, started } from "./fixtures.js";

/**
 * The leases sub-store's contract (`lease-store.ts`): one holder at a time until its lease lapses (or it is known dead), host faults counted on takeover, requests taken in order by the holder, once, and the holder told of each. Public API for store implementers (`@tapedeck/engine/testing`).
 */
export function describeLeaseStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`LeaseStore contract: ${name}`, () => {
    void describe("leases and requests", () => {
      test("a run is claimed by one owner at a time until its lease lapses; renew and release", async ({ store }) => {
        await store.createRun(newRun("run_l", { status: "running" }), [started(0)]);
        assert.equal(await store.claimRun("run_l", "eng_a", 1_000, 0), true);
        assert.equal(await store.claimRun("run_l", "eng_b", 2_000, 500), false, "held by another");
        assert.equal(await store.claimRun("run_l", "eng_a", 1_500, 500), true, "its holder may claim again");
        assert.deepEqual((await store.getRun("run_l"))?.owner, { id: "eng_a", until: 1_500 });
        await store.renewLeases("eng_a", 3_000);
        assert.equal(await store.claimRun("run_l", "eng_b", 5_000, 2_000), false, "renewed");
        assert.equal(await store.claimRun("run_l", "eng_c", 5_000, 2_000, "eng_a"), true, "taken over from an owner known to be dead");
        assert.equal(await store.claimRun("run_l", "eng_b", 5_000, 4_000), false);
        assert.equal(await store.claimRun("run_l", "eng_b", 5_000, 5_001), true, "lapsed: taken over");
        assert.deepEqual(
          (await store.listRuns({ owner: "eng_b" })).map((r) => r.id),
          ["run_l"],
        );
        await store.releaseRuns("eng_a", "run_l");
        assert.equal((await store.getRun("run_l"))?.owner?.id, "eng_b", "only the holder releases");
        await store.releaseRuns("eng_b");
        assert.equal((await store.getRun("run_l"))?.owner, undefined);
      });

      test("host faults: counted when a running run is taken over from an owner that never released it, or noted; cleared by progress", async ({ store }) => {
        await store.createRun(newRun("run_h", { status: "running" }), [started(0)]);
        await store.createRun(newRun("run_w", { status: "waiting" }), [started(0)]);
        assert.equal(await store.claimRun("run_h", "eng_a", 1_000, 0), true);
        assert.equal(await store.claimRun("run_h", "eng_a", 1_500, 500), true);
        assert.equal((await store.getRun("run_h"))?.hostFaults, undefined, "its own holder claiming again is no fault");
        assert.equal(await store.claimRun("run_h", "eng_b", 5_000, 2_000, "eng_a"), true);
        assert.deepEqual((await store.getRun("run_h"))?.hostFaults, {
          count: 1,
          last: "the process executing it stopped without shutting down (it crashed or was killed)",
        });
        await store.releaseRuns("eng_b");
        assert.equal(await store.claimRun("run_h", "eng_c", 6_000, 5_500), true);
        assert.equal((await store.getRun("run_h"))?.hostFaults?.count, 1, "a released run is taken without a fault");
        assert.equal(await store.noteHostFault("run_h", "RangeError: too deep"), 2);
        assert.deepEqual((await store.getRun("run_h"))?.hostFaults, { count: 2, last: "RangeError: too deep" });
        await store.append("run_h", [log(1)]);
        assert.equal((await store.getRun("run_h"))?.hostFaults?.count, 2, "an append without progress keeps them");
        await store.append("run_h", [log(2)], { updatedAt: 3, clearHostFaults: true });
        assert.equal((await store.getRun("run_h"))?.hostFaults, undefined);
        assert.equal(await store.claimRun("run_w", "eng_a", 1_000, 0), true);
        assert.equal(await store.claimRun("run_w", "eng_b", 5_000, 2_000, "eng_a"), true);
        assert.equal((await store.getRun("run_w"))?.hostFaults, undefined, "a parked run held by a dead process was not executing");
      });

      test("leases given up at a clean stop name their holder, are found as lapsed, and are taken over at once without a host fault", async ({ store }) => {
        await store.createRun(newRun("run_g", { status: "running" }), [started(0)]);
        await store.createRun(newRun("run_p", { status: "waiting" }), [started(0)]);
        await store.createRun(newRun("run_k", { status: "running" }), [started(0)]);
        await store.createRun(newRun("run_n", { status: "running" }), [started(0)]);
        await store.claimRun("run_g", "eng_a", 10_000, 0);
        await store.claimRun("run_p", "eng_a", 10_000, 0);
        await store.claimRun("run_k", "eng_b", 10_000, 0);
        assert.deepEqual(
          (await store.listRuns({ leaseLapsedBy: 5_000 })).map((r) => r.id),
          [],
          "no lease lapsed yet",
        );
        await store.renewLeases("eng_a", GIVEN_UP_UNTIL);
        assert.deepEqual((await store.getRun("run_g"))?.owner, { id: "eng_a", until: GIVEN_UP_UNTIL }, "still naming its holder");
        assert.deepEqual((await store.listRuns({ leaseLapsedBy: 5_000 })).map((r) => r.id).sort(), ["run_g", "run_p"]);
        assert.deepEqual(
          (await store.listRuns({ leaseLapsedBy: 10_001, status: ["running"] })).map((r) => r.id).sort(),
          ["run_g", "run_k"],
          "and lapsed ones; never unheld runs",
        );
        assert.equal(await store.claimRun("run_g", "eng_c", 20_000, 5_000), true);
        assert.equal((await store.getRun("run_g"))?.hostFaults, undefined, "a clean stop is no fault");
        assert.equal(await store.claimRun("run_k", "eng_c", 20_000, 10_001), true);
        assert.equal((await store.getRun("run_k"))?.hostFaults?.count, 1, "a lapsed lease is");
      });

      test("requests for a run are taken, in order, by the engine holding it, once", async ({ store }) => {
        await store.createRun(newRun("run_a", { status: "waiting" }), [started(0)]);
        await store.createRun(newRun("run_b", { status: "waiting" }), [started(0)]);
        await store.claimRun("run_a", "eng_a", 10_000, 0);
        await store.putRunRequest("run_a", { kind: "signal", name: "go" }, 1);
        await store.putRunRequest("run_b", { kind: "cancel", reason: "x" }, 2);
        await store.putRunRequest("run_a", { kind: "decide", seq: 2, decision: "rejected", reason: "no" }, 3);
        await store.putRunRequest("run_a", { kind: "child", runId: "run_c" }, 4);
        assert.deepEqual(await store.takeRunRequests("eng_b"), []);
        assert.deepEqual(await store.takeRunRequests("eng_a"), [
          { runId: "run_a", request: { kind: "signal", name: "go" } },
          { runId: "run_a", request: { kind: "decide", seq: 2, decision: "rejected", reason: "no" } },
          { runId: "run_a", request: { kind: "child", runId: "run_c" } },
        ]);
        assert.deepEqual(await store.takeRunRequests("eng_a"), []);
        await store.claimRun("run_b", "eng_a", 10_000, 0);
        assert.deepEqual(
          await store.takeRunRequests("eng_a"),
          [{ runId: "run_b", request: { kind: "cancel", reason: "x" } }],
          "kept for whoever holds the run next",
        );
      });

      test("a request tells its holder (runRequestsTopic): in its process, and from another process sharing the store", async ({ store, peer }) => {
        const now = Date.now();
        await store.createRun(newRun("run_n", { status: "waiting" }), [started(0)]);
        await store.claimRun("run_n", "eng_a", now + 60_000, now);
        let heard = 0;
        const stop = store.notifier.subscribe(runRequestsTopic("eng_a"), () => heard++);
        try {
          await store.putRunRequest("run_n", { kind: "signal", name: "go" }, 1);
          await eventually("the holder to hear the request", () => Promise.resolve(heard > 0));
          assert.deepEqual(await store.takeRunRequests("eng_a"), [{ runId: "run_n", request: { kind: "signal", name: "go" } }]);
          await store.putRunRequest("run_n", { kind: "signal", name: "kept" }, 2);
          await store.releaseRuns("eng_a");
          let heardB = 0;
          const stopB = store.notifier.subscribe(runRequestsTopic("eng_b"), () => heardB++);
          try {
            await store.claimRun("run_n", "eng_b", now + 60_000, now);
            await eventually("the next holder to hear of the requests left before it claimed the run", () => Promise.resolve(heardB > 0));
            assert.deepEqual(await store.takeRunRequests("eng_b"), [{ runId: "run_n", request: { kind: "signal", name: "kept" } }]);
          } finally {
            stopB();
          }
          await store.releaseRuns("eng_b");
          await store.claimRun("run_n", "eng_a", now + 60_000, now);
          if (peer === undefined) return;
          const other = await peer();
          try {
            heard = 0;
            await other.putRunRequest("run_n", { kind: "cancel", reason: "from elsewhere" }, 2);
            await eventually("the holder to hear a request another process left", () => Promise.resolve(heard > 0));
            assert.deepEqual(await store.takeRunRequests("eng_a"), [{ runId: "run_n", request: { kind: "cancel", reason: "from elsewhere" } }]);
          } finally {
            await other.close();
          }
        } finally {
          stop();
        }
      });
    });
  });
}
