import assert from "node:assert/strict";
import { describe } from "node:test";
import { GIVEN_UP_UNTIL, runRequestsTopic } from "../lease-store.js";
import type { Store } from "../store.js";
import { contractTest, eventually, type StoreFactory } from "./contract-test.js";
import { StoreConflictError } from "../store-conflict-error.js";
import { log, newRun, started } from "./fixtures.js";

/**
 * The leases sub-store's contract (`lease-store.ts`): one holder at a time until its lease lapses (or it is known dead), the lease epoch fencing every append of a holder that lost the run, renewals counted from when they are written, released runs found again, host faults counted on takeover, requests kept in order for the holder until it removes them, and the holder told of each. Public API for store implementers (`@tapedeck/engine/testing`).
 */

/** Whether `owner` won the run's lease (the epoch's presence). */
async function claimed(store: Store, runId: string, owner: string, until: number, now: number, takeOverFrom?: string): Promise<boolean> {
  return (await store.claimRun(runId, owner, until, now, takeOverFrom)) !== undefined;
}

/** The requests kept for `owner`'s runs, without their ids. */
async function requestsOf(store: Store, owner: string): Promise<unknown[]> {
  return (await store.runRequests(owner)).map(({ runId, request }) => ({ runId, request }));
}

/** Removes every request kept for `owner`'s runs (the holder applied them). */
async function removeAll(store: Store, owner: string): Promise<void> {
  for (const { id } of await store.runRequests(owner)) await store.removeRunRequest(id);
}
export function describeLeaseStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`LeaseStore contract: ${name}`, () => {
    void describe("leases and requests", () => {
      test("a run is claimed by one owner at a time until its lease lapses; renew and release", async ({ store }) => {
        const t = Date.now();
        await store.createRun(newRun("run_l", { status: "running" }), [started(0)]);
        assert.equal(await claimed(store, "run_l", "eng_a", t + 1_000, t), true);
        assert.equal(await claimed(store, "run_l", "eng_b", t + 2_000, t + 500), false, "held by another");
        assert.equal(await claimed(store, "run_l", "eng_a", t + 1_500, t + 500), true, "its holder may claim again");
        assert.deepEqual((await store.getRun("run_l"))?.owner, { id: "eng_a", until: t + 1_500 });
        await store.renewLeases("eng_a", 60_000);
        assert.equal(await claimed(store, "run_l", "eng_b", t + 5_000, t + 2_000), false, "renewed");
        assert.equal(await claimed(store, "run_l", "eng_c", t + 5_000, t + 2_000, "eng_a"), true, "taken over from an owner known to be dead");
        assert.equal(await claimed(store, "run_l", "eng_b", t + 5_000, t + 4_000), false);
        assert.equal(await claimed(store, "run_l", "eng_b", t + 5_000, t + 5_001), true, "lapsed: taken over");
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
        assert.equal(await claimed(store, "run_h", "eng_a", 1_000, 0), true);
        assert.equal(await claimed(store, "run_h", "eng_a", 1_500, 500), true);
        assert.equal((await store.getRun("run_h"))?.hostFaults, undefined, "its own holder claiming again is no fault");
        assert.equal(await claimed(store, "run_h", "eng_b", 5_000, 2_000, "eng_a"), true);
        assert.deepEqual((await store.getRun("run_h"))?.hostFaults, {
          count: 1,
          last: "the process executing it stopped without shutting down (it crashed or was killed)",
          crashes: 1,
        });
        await store.releaseRuns("eng_b");
        assert.equal(await claimed(store, "run_h", "eng_c", 6_000, 5_500), true);
        assert.equal((await store.getRun("run_h"))?.hostFaults?.count, 1, "a released run is taken without a fault");
        assert.equal(await store.noteHostFault("run_h", "RangeError: too deep"), 2);
        assert.deepEqual((await store.getRun("run_h"))?.hostFaults, { count: 2, last: "RangeError: too deep", crashes: 1 });
        await store.append("run_h", [log(1)]);
        assert.equal((await store.getRun("run_h"))?.hostFaults?.count, 2, "an append without progress keeps them");
        await store.append("run_h", [log(2)], { updatedAt: 3, clearHostFaults: true });
        assert.equal((await store.getRun("run_h"))?.hostFaults, undefined);
        assert.equal(await claimed(store, "run_w", "eng_a", 1_000, 0), true);
        assert.equal(await claimed(store, "run_w", "eng_b", 5_000, 2_000, "eng_a"), true);
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
        await store.giveUpLeases("eng_a");
        assert.deepEqual((await store.getRun("run_g"))?.owner, { id: "eng_a", until: GIVEN_UP_UNTIL }, "still naming its holder");
        assert.deepEqual((await store.listRuns({ leaseLapsedBy: 5_000 })).map((r) => r.id).sort(), ["run_g", "run_p"]);
        assert.deepEqual(
          (await store.listRuns({ leaseLapsedBy: 10_001, status: ["running"] })).map((r) => r.id).sort(),
          ["run_g", "run_k"],
          "and lapsed ones; never unheld runs",
        );
        assert.equal(await claimed(store, "run_g", "eng_c", 20_000, 5_000), true);
        assert.equal((await store.getRun("run_g"))?.hostFaults, undefined, "a clean stop is no fault");
        assert.equal(await claimed(store, "run_k", "eng_c", 20_000, 10_001), true);
        assert.equal((await store.getRun("run_k"))?.hostFaults?.count, 1, "a lapsed lease is");
      });

      test("requests for a run are read, in order, by the engine holding it, and kept until it removes them", async ({ store }) => {
        await store.createRun(newRun("run_a", { status: "waiting" }), [started(0)]);
        await store.createRun(newRun("run_b", { status: "waiting" }), [started(0)]);
        await store.claimRun("run_a", "eng_a", 10_000, 0);
        await store.putRunRequest("run_a", { kind: "signal", name: "go" }, 1);
        await store.putRunRequest("run_b", { kind: "cancel", reason: "x" }, 2);
        await store.putRunRequest("run_a", { kind: "decide", seq: 2, decision: "rejected", reason: "no" }, 3);
        await store.putRunRequest("run_a", { kind: "child", runId: "run_c" }, 4);
        assert.deepEqual(await requestsOf(store, "eng_b"), []);
        const expected = [
          { runId: "run_a", request: { kind: "signal", name: "go" } },
          { runId: "run_a", request: { kind: "decide", seq: 2, decision: "rejected", reason: "no" } },
          { runId: "run_a", request: { kind: "child", runId: "run_c" } },
        ];
        assert.deepEqual(await requestsOf(store, "eng_a"), expected);
        assert.deepEqual(await requestsOf(store, "eng_a"), expected, "reading them removes nothing");
        const [first] = await store.runRequests("eng_a");
        await store.removeRunRequest(first!.id);
        await store.removeRunRequest(first!.id);
        assert.deepEqual(await requestsOf(store, "eng_a"), expected.slice(1), "removed once applied (twice is nothing)");
        await removeAll(store, "eng_a");
        assert.deepEqual(await requestsOf(store, "eng_a"), []);
        await store.claimRun("run_b", "eng_a", 10_000, 0);
        assert.deepEqual(
          await requestsOf(store, "eng_a"),
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
          assert.deepEqual(await requestsOf(store, "eng_a"), [{ runId: "run_n", request: { kind: "signal", name: "go" } }]);
          await removeAll(store, "eng_a");
          await store.putRunRequest("run_n", { kind: "signal", name: "kept" }, 2);
          await store.releaseRuns("eng_a");
          let heardB = 0;
          const stopB = store.notifier.subscribe(runRequestsTopic("eng_b"), () => heardB++);
          try {
            await store.claimRun("run_n", "eng_b", now + 60_000, now);
            await eventually("the next holder to hear of the requests left before it claimed the run", () => Promise.resolve(heardB > 0));
            assert.deepEqual(await requestsOf(store, "eng_b"), [{ runId: "run_n", request: { kind: "signal", name: "kept" } }]);
            await removeAll(store, "eng_b");
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
            assert.deepEqual(await requestsOf(store, "eng_a"), [{ runId: "run_n", request: { kind: "cancel", reason: "from elsewhere" } }]);
          } finally {
            await other.close();
          }
        } finally {
          stop();
        }
      });

      test("the lease epoch fences appends: after a takeover the old holder's appends are refused (LeaseLostError), writing nothing", async ({ store }) => {
        const t = Date.now();
        await store.createRun(newRun("run_f", { status: "running" }), [started(0)]);
        const first = await store.claimRun("run_f", "eng_a", t + 60_000, t);
        assert.notEqual(first, undefined);
        assert.equal(await store.claimRun("run_f", "eng_a", t + 60_000, t), first, "its holder claiming again keeps the epoch");
        await store.append("run_f", [log(1)], undefined, first);
        const second = await store.claimRun("run_f", "eng_b", t + 60_000, t, "eng_a");
        assert.notEqual(second, undefined);
        assert.notEqual(second, first, "a new owner gets a new epoch");
        const refused = (error: unknown) => (error as { code?: unknown }).code === "lease_lost" && error instanceof StoreConflictError;
        await assert.rejects(store.append("run_f", [log(2)], undefined, first), refused, "a step of the old holder");
        await assert.rejects(store.append("run_f", [log(2)], { updatedAt: 5, status: "completed" }, first), refused, "the old holder's end");
        await assert.rejects(store.append("run_f", [log(9)], undefined, first), refused, "whatever index it names");
        const run = await store.getRun("run_f");
        assert.equal(run?.journalLength, 2, "nothing of the refused appends was written");
        assert.equal(run?.status, "running");
        assert.equal((await store.readJournal("run_f")).length, 2);
        await store.append("run_f", [log(2)], undefined, second);
        await store.append("run_f", [log(3)], { updatedAt: 6 }, second);
        await store.append("run_f", [log(4)]);
        assert.equal((await store.getRun("run_f"))?.journalLength, 5, "the new holder (and an unfenced writer) go on");
        await store.releaseRuns("eng_b", "run_f");
        const third = await store.claimRun("run_f", "eng_b", t + 60_000, t);
        assert.notEqual(third, second, "released and claimed again: a new epoch, so an execution of before the release is fenced too");
        await assert.rejects(store.append("run_f", [log(5)], undefined, second), refused);
      });

      test("a holder that finds its lease lost (alive after all) takes back the host fault its takeover counted, once", async ({ store }) => {
        const t = Date.now();
        await store.createRun(newRun("run_s", { status: "running" }), [started(0)]);
        const first = (await store.claimRun("run_s", "eng_a", t + 1_000, t))!;
        const second = (await store.claimRun("run_s", "eng_b", t + 60_000, t + 2_000))!;
        assert.equal((await store.getRun("run_s"))?.hostFaults?.count, 1, "lapsed: counted as a crash");
        await store.noteLeaseLost("run_s", second);
        assert.equal((await store.getRun("run_s"))?.hostFaults?.count, 1, "the current holder has lost nothing");
        await store.noteLeaseLost("run_s", first);
        assert.equal((await store.getRun("run_s"))?.hostFaults, undefined, "the old holder was alive: no fault");
        await store.noteLeaseLost("run_s", first);
        assert.equal((await store.getRun("run_s"))?.hostFaults, undefined, "taken back once");
        await store.noteHostFault("run_s", "RangeError: too deep");
        await store.noteLeaseLost("run_s", first);
        assert.deepEqual((await store.getRun("run_s"))?.hostFaults, { count: 1, last: "RangeError: too deep", crashes: 0 }, "a fault of another kind stays");
      });

      test("crashes among host faults are forgiven by the holder of the current epoch; faults the engine threw stay", async ({ store }) => {
        const t = Date.now();
        await store.createRun(newRun("run_c", { status: "running" }), [started(0)]);
        await store.claimRun("run_c", "eng_a", t + 1_000, t);
        await store.noteHostFault("run_c", "RangeError: too deep");
        const second = (await store.claimRun("run_c", "eng_b", t + 3_000, t + 2_000))!;
        const third = (await store.claimRun("run_c", "eng_c", t + 60_000, t + 4_000))!;
        const crash = "the process executing it stopped without shutting down (it crashed or was killed)";
        assert.deepEqual(
          (await store.getRun("run_c"))?.hostFaults,
          { count: 3, last: crash, crashes: 2 },
          "two takeovers after lapsed leases, one thrown fault",
        );
        await store.forgiveCrashes("run_c", second);
        assert.equal((await store.getRun("run_c"))?.hostFaults?.crashes, 2, "a holder of an older epoch forgives nothing");
        await store.forgiveCrashes("run_c", third);
        const left = (await store.getRun("run_c"))?.hostFaults;
        assert.deepEqual([left?.count, left?.crashes], [1, 0], "the thrown fault stays counted");
        await store.forgiveCrashes("run_c", third);
        assert.equal((await store.getRun("run_c"))?.hostFaults?.count, 1, "forgiven once");
        await store.noteLeaseLost("run_c", second);
        assert.equal((await store.getRun("run_c"))?.hostFaults?.count, 1, "a crash forgiven is not taken back again: the thrown fault stays");

        await store.createRun(newRun("run_d", { status: "running" }), [started(0)]);
        await store.claimRun("run_d", "eng_a", t + 1_000, t);
        const taken = (await store.claimRun("run_d", "eng_b", t + 60_000, t + 2_000))!;
        await store.forgiveCrashes("run_d", taken);
        assert.equal((await store.getRun("run_d"))?.hostFaults, undefined, "crashes alone: nothing left counted");
        const next = (await store.claimRun("run_d", "eng_c", t + 60_000, t + 90_000))!;
        await store.append("run_d", [log(1)], { updatedAt: 7, clearHostFaults: true }, next);
        assert.equal((await store.getRun("run_d"))?.hostFaults, undefined, "progress clears crashes with the rest");
      });

      test("a renewal's deadline is counted from when it is written, for every run of the owner; a lease given up is not renewed", async ({ store }) => {
        const t = Date.now();
        await store.createRun(newRun("run_r1", { status: "running" }), [started(0)]);
        await store.createRun(newRun("run_r2", { status: "waiting" }), [started(0)]);
        await store.claimRun("run_r1", "eng_a", t + 1_000, t);
        await store.claimRun("run_r2", "eng_a", t + 1_000, t);
        const before = Date.now();
        await store.renewLeases("eng_a", 60_000);
        const after = Date.now();
        for (const id of ["run_r1", "run_r2"]) {
          const until = (await store.getRun(id))?.owner?.until ?? 0;
          assert.ok(until >= before + 60_000 && until <= after + 60_000, `${id}: renewed until ${until - before} ms after the call (60000 expected)`);
        }
        await store.giveUpLeases("eng_a");
        await store.renewLeases("eng_a", 60_000);
        assert.equal(
          (await store.getRun("run_r1"))?.owner?.until,
          GIVEN_UP_UNTIL,
          "a renewal after the give-up (one in flight as the engine closed) does not revive it",
        );
      });

      test("a running run released by its holder is found as released (releasedBefore) and taken again without a host fault; an ended or parked one is not", async ({
        store,
      }) => {
        const t = Date.now();
        await store.createRun(newRun("run_x", { status: "running" }), [started(0)]);
        await store.createRun(newRun("run_y", { status: "waiting" }), [started(0)]);
        await store.createRun(newRun("run_z", { status: "running" }), [started(0)]);
        for (const id of ["run_x", "run_y", "run_z"]) await store.claimRun(id, "eng_a", t + 60_000, t);
        assert.deepEqual(await store.listRuns({ releasedBefore: Date.now() + 1 }), [], "held runs are not released");
        await store.releaseRuns("eng_a", "run_x");
        await store.releaseRuns("eng_a", "run_y");
        const released = Date.now();
        assert.deepEqual(await store.listRuns({ releasedBefore: t - 1 }), [], "released later than that");
        assert.deepEqual(
          (await store.listRuns({ releasedBefore: released + 1, status: ["running"] })).map((r) => r.id),
          ["run_x"],
          "a running run released; never a parked one, a held one or one never held",
        );
        assert.equal(await claimed(store, "run_x", "eng_b", released + 60_000, released), true);
        assert.equal((await store.getRun("run_x"))?.hostFaults, undefined);
        assert.deepEqual(await store.listRuns({ releasedBefore: released + 1 }), [], "claimed: no longer released");
        await store.append("run_z", [log(1), { index: 2, at: 3, kind: "run.completed", output: null }], { updatedAt: 3, status: "completed" });
        await store.releaseRuns("eng_a");
        assert.deepEqual(await store.listRuns({ releasedBefore: Date.now() + 1 }), [], "an ended run is never released");
      });

      test("requests survive a holder that dies before applying them: the next holder reads them", async ({ store }) => {
        const t = Date.now();
        await store.createRun(newRun("run_d", { status: "waiting" }), [started(0)]);
        await store.claimRun("run_d", "eng_a", t + 60_000, t);
        await store.putRunRequest("run_d", { kind: "signal", name: "go" }, 1);
        assert.deepEqual(await requestsOf(store, "eng_a"), [{ runId: "run_d", request: { kind: "signal", name: "go" } }], "read by the holder, which dies now");
        assert.equal(await claimed(store, "run_d", "eng_b", t + 60_000, t, "eng_a"), true);
        assert.deepEqual(await requestsOf(store, "eng_a"), [], "no longer the dead holder's");
        assert.deepEqual(await requestsOf(store, "eng_b"), [{ runId: "run_d", request: { kind: "signal", name: "go" } }]);
      });
    });
  });
}
