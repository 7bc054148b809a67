/**
 * The erasure sub-store's contract (`erase-store.ts`): every run and idle session of one
 * namespace deleted whole (every row keyed by them) in batches of at most the limit, with its
 * namespace credentials, rate-limit calls, host tasks and schedules; never a run that has not
 * ended nor a session held or waiting for a decision (named by `activeRuns`); nothing of another
 * namespace, even one whose name another's begins with; a dry run counts what it deletes.
 * Public API for store implementers (`@tapedeck/engine/testing`).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import type { RunStatus } from "@tapedeck/protocol";
import type { Store } from "../store.js";
import { NO_ERASURE, type EraseCounts } from "../erase-store.js";
import { contractTest, type StoreFactory } from "./contract-test.js";
import { log, newRun, started } from "./fixtures.js";

const SESSION = (n: number) => `ses_${String(n).padStart(32, "0")}`;
const credential = { name: "TOKEN", kind: "bearer", hosts: ["a.example"], keyId: "k", iv: "aXY", sealed: "c2Vh", createdAt: 1, updatedAt: 1 } as const;

async function runIn(store: Store, id: string, namespace: string, status: RunStatus, extra: Parameters<typeof newRun>[1] = {}): Promise<void> {
  await store.createRun(newRun(id, { createdAt: 1, status: "running", namespace, ...extra }), [started(0)]);
  await store.append(id, [log(1)], { status, updatedAt: 2 });
}

/** Everything a namespace can have in the store, `tag` making its ids its own. */
async function fill(store: Store, namespace: string, tag: string): Promise<void> {
  await runIn(store, `run_${tag}_done`, namespace, "completed");
  await runIn(store, `run_${tag}_failed`, namespace, "failed");
  await runIn(store, SESSION(tag.length), namespace, "waiting");
  await store.putSignal({ runId: `run_${tag}_done`, name: "go", payload: 1, at: 1 });
  await store.putWebhook({ tokenHash: `h_${tag}`, runId: `run_${tag}_done`, name: "go", createdAt: 1 });
  await store.putRunRequest(`run_${tag}_done`, { kind: "cancel", reason: "stop" }, 1);
  await store.credentials.put({ ...credential, scopeKey: JSON.stringify(["run", `run_${tag}_done`]) });
  await store.credentials.put({ ...credential, scopeKey: JSON.stringify(["namespace", "ts_1", namespace]) });
  await store.rateLimits?.take(JSON.stringify([namespace, "files.write"]), [{ ms: 60_000, limit: 10 }], 1_000);
  await store.rateLimits?.take(JSON.stringify([namespace, "files.read"]), [{ ms: 60_000, limit: 10 }], 1_000);
  await store.directBlobs?.put(SESSION(tag.length), "blob_1", "spilled");
  await store.directBlobs?.put(SESSION(tag.length), "sealed_args_1", "sealed");
}

async function eraseAll(store: Store, namespace: string, limit: number): Promise<{ counts: EraseCounts; batches: number }> {
  let counts: Record<string, number> = { ...NO_ERASURE };
  let batches = 0;
  for (const batch of [store.erase.eraseRunsBatch.bind(store.erase), store.erase.eraseRestBatch.bind(store.erase)]) {
    for (;;) {
      const deleted = await batch(namespace, limit);
      batches += 1;
      if (deleted.runs + deleted.sessions > limit) assert.fail(`a batch of ${limit} deleted ${deleted.runs + deleted.sessions} runs`);
      counts = Object.fromEntries(Object.entries(counts).map(([kind, n]) => [kind, n + deleted[kind as keyof EraseCounts]]));
      if (Object.values(deleted).every((n) => n === 0)) break;
    }
  }
  return { counts: counts as unknown as EraseCounts, batches };
}

export function describeEraseStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`EraseStore contract: ${name}`, () => {
    test("deletes a namespace's runs, sessions and rows in batches, as counted; a namespace another's name begins with keeps everything", async ({ store }) => {
      await fill(store, "alice", "a");
      await fill(store, "alice2", "bb");
      await fill(store, "ali", "ccc");
      const counted = await store.erase.countErasable("alice");
      const expected = {
        runs: 2,
        sessions: 1,
        journalEntries: 6,
        blobs: 1,
        sealedArguments: 1,
        signals: 2,
        requests: 1,
        events: 0,
        hostTasks: 0,
        credentials: 2,
        rateLimitCalls: store.rateLimits === undefined ? 0 : 2,
        schedules: 0,
      };
      assert.deepEqual(counted, expected);
      const { counts, batches } = await eraseAll(store, "alice", 1);
      assert.deepEqual(counts, expected, "the dry run counted what was erased");
      assert.ok(batches >= 5, "one run per batch");
      assert.deepEqual(await store.erase.countErasable("alice"), NO_ERASURE);
      for (const id of ["run_a_done", "run_a_failed", SESSION(1)]) assert.equal(await store.getRun(id), undefined);
      for (const other of ["alice2", "ali"]) {
        assert.deepEqual(await store.erase.countErasable(other), expected, `${other} keeps everything`);
      }
    });

    test("a run not ended, a session held or waiting for a decision, are named and never deleted", async ({ store }) => {
      await runIn(store, "run_done", "alice", "completed");
      for (const status of ["waiting", "running", "queued"] as const) await runIn(store, `run_${status}`, "alice", status);
      await runIn(store, SESSION(1), "alice", "waiting");
      await store.append(SESSION(1), [], { updatedAt: 3, waits: [{ kind: "approval", seq: 1, tool: "shop.refund", args: {} }] });
      const active = (await store.erase.activeRuns("alice", 10)).map((run) => run.id).sort();
      const { counts } = await eraseAll(store, "alice", 10);
      assert.equal(counts.runs, 1);
      assert.deepEqual((await store.erase.activeRuns("alice", 10)).map((run) => run.id).sort(), active);
      assert.ok(active.includes("run_waiting") && active.includes("run_running") && active.includes("run_queued"), active.join(", "));
      assert.equal(await store.getRun("run_done"), undefined);
      assert.equal((await store.getRun("run_waiting"))?.status, "waiting");
      assert.deepEqual(await store.erase.activeRuns("alice", 2).then((runs) => runs.length), 2, "at most the limit");
    });
  });
}
