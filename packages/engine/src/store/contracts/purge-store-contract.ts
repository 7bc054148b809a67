/**
 * The purge sub-store's contract (`purge-store.ts`): ended runs and idle direct sessions deleted
 * whole (every row keyed by them), in batches of at most the limit, never a run that has not
 * ended nor one whose workflow relative is alive; a dry run counts what a purge would delete.
 * Public API for store implementers (`@tapedeck/engine/testing`).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import type { RunStatus } from "@tapedeck/protocol";
import type { Store } from "../store.js";
import { contractTest, type StoreFactory } from "./contract-test.js";
import { log, newRun, started } from "./fixtures.js";

const T = 1_700_000_100_000;
const SESSION = (n: number) => `ses_${String(n).padStart(32, "0")}`;

/** A run created at `at`, with two entries, then left in `status` at `at`. */
async function runAt(store: Store, id: string, status: RunStatus, at: number, extra: Parameters<typeof newRun>[1] = {}): Promise<void> {
  await store.createRun(newRun(id, { createdAt: at, status: "running", ...extra }), [started(0)]);
  await store.append(id, [log(1)], { status, updatedAt: at });
}

async function ids(store: Store): Promise<string[]> {
  return (await store.listRuns({ limit: 1000 })).map((run) => run.id).sort();
}

export function describePurgeStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`PurgeStore contract: ${name}`, () => {
    test("deletes the runs ended before the time with every row keyed by them; runs not ended, and ended since, stay; a dry run counts the same", async ({
      store,
    }) => {
      await runAt(store, "run_old_done", "completed", T - 3);
      await runAt(store, "run_old_failed", "failed", T - 2);
      await runAt(store, "run_old_cancelled", "cancelled", T - 1);
      await runAt(store, "run_new_done", "completed", T);
      for (const [id, status] of [
        ["run_old_waiting", "waiting"],
        ["run_old_running", "running"],
        ["run_old_queued", "queued"],
      ] as const)
        await runAt(store, id, status, T - 10);
      await store.putSignal({ runId: "run_old_done", name: "go", payload: { secret: 1 }, at: 1 });
      await store.putWebhook({ tokenHash: "h1", runId: "run_old_done", name: "go", createdAt: 1 });
      await store.putRunRequest("run_old_done", { kind: "cancel", reason: "stop" }, 1);
      const credential = { name: "TOKEN", kind: "bearer", hosts: ["a.example"], keyId: "k", iv: "aXY", sealed: "c2Vh", createdAt: 1, updatedAt: 1 };
      await store.credentials.put({ ...credential, scopeKey: '["run","run_old_done"]' });
      await store.credentials.put({ ...credential, scopeKey: '["run","run_new_done"]' });

      const counted = await store.purge.countPurgeable({ endedBefore: T });
      assert.deepEqual(counted, { runs: 3, sessions: 0, journalEntries: 6 });
      assert.equal((await ids(store)).length, 7, "a dry run deletes nothing");

      assert.deepEqual(await store.purge.purgeBatch({ endedBefore: T }, 100), counted);
      assert.deepEqual(await ids(store), ["run_new_done", "run_old_queued", "run_old_running", "run_old_waiting"]);
      assert.deepEqual(await store.readJournal("run_old_done"), []);
      assert.deepEqual(await store.pendingSignals("run_old_done", "go"), []);
      assert.equal(await store.getWebhook("h1"), undefined);
      assert.deepEqual(
        (await store.credentials.list()).map((c) => c.scopeKey),
        ['["run","run_new_done"]'],
      );
      assert.equal((await store.readJournal("run_new_done")).length, 2);
      assert.deepEqual(await store.purge.purgeBatch({ endedBefore: T }, 100), { runs: 0, sessions: 0, journalEntries: 0 });
    });

    test("a batch deletes at most its limit, the oldest end first", async ({ store }) => {
      for (let i = 0; i < 5; i++) await runAt(store, `run_${i}`, "completed", T - 10 + i);
      assert.equal((await store.purge.purgeBatch({ endedBefore: T }, 2)).runs, 2);
      assert.deepEqual(await ids(store), ["run_2", "run_3", "run_4"]);
      assert.equal((await store.purge.purgeBatch({ endedBefore: T }, 2)).runs, 2);
      assert.equal((await store.purge.purgeBatch({ endedBefore: T }, 2)).runs, 1);
      assert.equal((await store.purge.purgeBatch({ endedBefore: T }, 2)).runs, 0);
    });

    test("a workflow child whose caller lives, and a caller whose child lives, stay; ended families go", async ({ store }) => {
      await runAt(store, "run_caller_waiting", "waiting", T - 5);
      await runAt(store, "run_child_of_waiting", "completed", T - 5, { caller: { runId: "run_caller_waiting", seq: 1 } });
      await runAt(store, "run_caller_done", "completed", T - 5);
      await runAt(store, "run_child_running", "running", T - 5, { caller: { runId: "run_caller_done", seq: 1 } });
      await runAt(store, "run_family_done", "completed", T - 5);
      await runAt(store, "run_family_child", "completed", T - 5, { caller: { runId: "run_family_done", seq: 1 } });
      assert.deepEqual(await store.purge.countPurgeable({ endedBefore: T }), { runs: 2, sessions: 0, journalEntries: 4 });
      await store.purge.purgeBatch({ endedBefore: T }, 100);
      assert.deepEqual(await ids(store), ["run_caller_done", "run_caller_waiting", "run_child_of_waiting", "run_child_running"]);
    });

    test("a direct session unused since the time goes with its blobs; one held live, one whose call waits for a decision, and one used since stay", async ({
      store,
    }) => {
      for (const n of [1, 2, 3]) await runAt(store, SESSION(n), "waiting", T - 5);
      await runAt(store, SESSION(4), "waiting", T + 5);
      await store.claimRun(SESSION(2), "eng_a", Number.MAX_SAFE_INTEGER, 0);
      await store.append(SESSION(3), [], {
        updatedAt: T - 5,
        waits: [{ kind: "approval", seq: 1, tool: "shop.refund", args: {} }],
      });
      await store.directBlobs?.put(SESSION(1), "blob_1", "a spilled result");
      await store.directBlobs?.put(SESSION(4), "blob_1", "kept");
      assert.deepEqual(await store.purge.countPurgeable({ endedBefore: T }), { runs: 0, sessions: 1, journalEntries: 2 });
      await store.purge.purgeBatch({ endedBefore: T }, 100);
      assert.equal(await store.getRun(SESSION(1)), undefined);
      assert.equal(await store.directBlobs?.get(SESSION(1), "blob_1"), undefined);
      assert.equal(await store.directBlobs?.get(SESSION(4), "blob_1"), "kept");
      assert.notEqual(await store.getRun(SESSION(2)), undefined, "held live by an engine");
      assert.notEqual(await store.getRun(SESSION(3)), undefined, "a call waits for a decision");
      assert.notEqual(await store.getRun(SESSION(4)), undefined, "used since");
    });

    test("a namespace limits the purge to its runs", async ({ store }) => {
      await runAt(store, "run_alice", "completed", T - 5, { namespace: "alice" });
      await runAt(store, "run_bob", "completed", T - 5, { namespace: "bob" });
      await runAt(store, "run_none", "completed", T - 5);
      assert.deepEqual(await store.purge.countPurgeable({ endedBefore: T, namespace: "alice" }), { runs: 1, sessions: 0, journalEntries: 2 });
      await store.purge.purgeBatch({ endedBefore: T, namespace: "alice" }, 100);
      assert.deepEqual(await ids(store), ["run_bob", "run_none"]);
    });
  });
}
