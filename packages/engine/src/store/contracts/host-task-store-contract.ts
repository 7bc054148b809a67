/**
 * The host task queue's contract (`host-task-store.ts`): tasks queued once per attempt, claimed
 * by one poll at a time (whatever process polls) with what the poll may see, leases that only
 * their holder extends or answers, withdrawals, lapsed leases, and the notifications that tell
 * waiting polls and the process running the call. Public API for store implementers
 * (`@tapedeck/engine/testing`).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { HOST_TASKS_TOPIC, hostTaskWaiterTopic, type HostTaskRecord, type NewHostTask } from "../host-task-store.js";
import type { Store } from "../store.js";
import { contractTest, eventually, type StoreFactory } from "./contract-test.js";
import { isConflict } from "./fixtures.js";

const NOW = 1_800_000_000_000;

/** A task; its idempotency key is its call's, `{run}/{seq}`, unless `fields` says otherwise. */
function task(id: string, fields: Partial<NewHostTask> = {}): NewHostTask {
  const runId = fields.runId ?? `run_${id}`;
  const seq = fields.seq ?? 1;
  return {
    id,
    runId,
    seq,
    attempt: 1,
    tool: "shop.charge",
    args: { cents: 500, note: "héllo ✓" },
    idempotencyKey: `${runId}/${seq}`,
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    heartbeatTimeoutMs: 30_000,
    audience: { toolsets: ["ts_a"] },
    waiter: "eng_a",
    createdAt: NOW,
    ...fields,
  };
}

const ids = (tasks: readonly HostTaskRecord[]): string[] => tasks.map((t) => t.id);

/** Counts the publishes of a topic on the store's notifier. */
function listen(store: Store, topic: string): { readonly heard: () => number; readonly stop: () => void } {
  let heard = 0;
  const stop = store.notifier.subscribe(topic, () => heard++);
  return { heard: () => heard, stop };
}

export function describeHostTaskStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`HostTaskStore contract: ${name}`, () => {
    test("a queued task is claimed once, with a lease until now + its heartbeat timeout, and comes back whole", async ({ store }) => {
      const queued = await store.hostTasks.enqueue(task("t1"));
      assert.deepEqual(queued, { ...task("t1"), state: "queued" });
      const [claimed, ...more] = await store.hostTasks.claim({ tools: ["shop.charge"] }, 5, NOW + 10);
      assert.deepEqual(more, []);
      assert.ok(claimed?.lease !== undefined && claimed.lease.length >= 16, "a lease no one can guess");
      assert.deepEqual(claimed, { ...task("t1"), state: "claimed", lease: claimed.lease, leaseUntil: NOW + 10 + 30_000 });
      assert.deepEqual(await store.hostTasks.claim({ tools: ["shop.charge"] }, 5, NOW + 11), [], "claimed once");
      assert.deepEqual(await store.hostTasks.get(["t1", "t_unknown"]), [claimed]);
      assert.deepEqual(await store.hostTasks.find("run_t1", "run_t1/1", 1), claimed);
      assert.equal(await store.hostTasks.find("run_t1", "run_t1/1", 2), undefined);
    });

    test("a user tool's invocations share their call's run, seq and attempt, each its own task by its key; another attempt gives up only its key's", async ({
      store,
    }) => {
      const sub = (id: string, n: number, attempt = 1) => task(id, { runId: "run_u", seq: 3, attempt, idempotencyKey: `run_u/3.${n}` });
      const first = await store.hostTasks.enqueue(sub("u1", 1));
      const second = await store.hostTasks.enqueue(sub("u2", 2));
      assert.deepEqual([first.id, second.id], ["u1", "u2"], "the second invocation is a task of its own");
      const claimed = await store.hostTasks.claim({ tools: ["shop.charge"] }, 5, NOW);
      assert.deepEqual(
        claimed.map((t) => [t.id, t.idempotencyKey]),
        [
          ["u1", "run_u/3.1"],
          ["u2", "run_u/3.2"],
        ],
      );
      assert.equal((await store.hostTasks.find("run_u", "run_u/3.2", 1))?.id, "u2");
      await store.hostTasks.enqueue(sub("u1_again", 1, 2));
      assert.equal(await store.hostTasks.heartbeat("u1", claimed[0]!.lease!, NOW + 1), "cancelled", "the earlier attempt of the same invocation is withdrawn");
      assert.equal(await store.hostTasks.heartbeat("u2", claimed[1]!.lease!, NOW + 1), "ok", "the other invocation stands");
    });

    test("queueing an attempt again returns its task as it stands, waited for by the new waiter; a later attempt gives the earlier up", async ({ store }) => {
      await store.hostTasks.enqueue(task("t1"));
      const again = await store.hostTasks.enqueue(task("t1_again", { runId: "run_t1", waiter: "eng_b" }));
      assert.deepEqual(again, { ...task("t1"), waiter: "eng_b", state: "queued" });
      assert.deepEqual(ids(await store.hostTasks.list()), ["t1"], "nothing new was queued");
      const [held] = await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
      assert.equal(held?.waiter, "eng_b");
      await store.hostTasks.enqueue(task("t1_second", { runId: "run_t1", attempt: 2, idempotencyKey: "run_t1/1" }));
      assert.equal(await store.hostTasks.heartbeat("t1", held.lease!, NOW + 1), "cancelled", "a claimed earlier attempt is withdrawn");
      assert.deepEqual(
        (await store.hostTasks.list()).map((t) => [t.id, t.state]),
        [
          ["t1", "withdrawn"],
          ["t1_second", "queued"],
        ],
      );
      await store.hostTasks.enqueue(task("t1_third", { runId: "run_t1", attempt: 3 }));
      assert.deepEqual(ids(await store.hostTasks.list({ states: ["queued"] })), ["t1_third"], "a queued earlier attempt is deleted");
    });

    test("a poll claims only the tools, namespace, labels and toolset it names, oldest first, at most max", async ({ store }) => {
      await store.hostTasks.enqueue(task("t_alice", { audience: { namespace: "alice", toolsets: ["ts_a"] } }));
      await store.hostTasks.enqueue(task("t_mail", { tool: "mail.send" }));
      await store.hostTasks.enqueue(task("t_red", { audience: { labels: { team: "red", "dotted.key": 'q"' }, toolsets: ["ts_derived", "ts_a"] } }));
      await store.hostTasks.enqueue(task("t_bob", { tool: "shop.price", audience: { namespace: "bob", toolsets: ["ts_b"] } }));
      await store.hostTasks.enqueue(task("t_shopping", { tool: "shopping.list" }));
      const claim = async (filter: Parameters<Store["hostTasks"]["claim"]>[0], max = 10) => ids(await store.hostTasks.claim(filter, max, NOW));
      assert.deepEqual(await claim({ tools: ["shop.*"], namespace: "carol" }), []);
      assert.deepEqual(await claim({ tools: ["shop.*"], labels: { team: "blue" } }), []);
      assert.deepEqual(await claim({ tools: ["shop.*"], toolset: "ts_b", namespace: "alice" }), []);
      assert.deepEqual(await claim({ tools: ["shop.*"], toolset: "ts_a", labels: { team: "red" } }), ["t_red"], "a run on a toolset derived from ts_a");
      assert.deepEqual(await claim({ tools: ["shop.charge", "mail.send"] }, 1), ["t_alice"], "oldest first, at most max");
      assert.deepEqual(await claim({ tools: ["shop.*"] }), ["t_bob"], "a group is its tools, not another group sharing its prefix");
      assert.deepEqual(await claim({ tools: ["mail.send", "shopping.list"] }), ["t_mail", "t_shopping"]);
    });

    test("claims made at the same time never get the same task", async ({ store, peer }) => {
      for (let i = 0; i < 20; i++) await store.hostTasks.enqueue(task(`t${i}`, { runId: `run_${i}` }));
      const other = peer === undefined ? undefined : await peer();
      try {
        const stores = other === undefined ? [store] : [store, other];
        const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => stores[i % stores.length]!.hostTasks.claim({ tools: ["shop.*"] }, 3, NOW)));
        const claimed = claims.flatMap(ids);
        assert.equal(claimed.length, 20);
        assert.equal(new Set(claimed).size, 20, "no task twice");
      } finally {
        await other?.close();
      }
    });

    test("only the current lease heartbeats or answers; a task is answered once", async ({ store }) => {
      await store.hostTasks.enqueue(task("t1"));
      const [held] = await store.hostTasks.claim({ tools: ["shop.charge"] }, 1, NOW);
      const lease = held!.lease!;
      assert.equal(await store.hostTasks.heartbeat("t1", "not-the-lease", NOW + 1), "lost");
      assert.equal(await store.hostTasks.heartbeat("t_unknown", lease, NOW + 1), "lost");
      assert.equal(await store.hostTasks.heartbeat("t1", lease, NOW + 20_000), "ok");
      assert.equal((await store.hostTasks.get(["t1"]))[0]?.leaseUntil, NOW + 50_000);
      assert.equal(await store.hostTasks.answer("t1", "not-the-lease", { kind: "result", value: 1 }, NOW + 21_000), "lost");
      assert.equal(await store.hostTasks.answer("t1", lease, { kind: "result", value: { charged: true } }, NOW + 21_000), "ok");
      assert.equal(await store.hostTasks.answer("t1", lease, { kind: "result", value: 2 }, NOW + 21_001), "lost", "answered once");
      assert.equal(await store.hostTasks.heartbeat("t1", lease, NOW + 21_002), "lost");
      const [answered] = await store.hostTasks.get(["t1"]);
      assert.deepEqual([answered?.state, answered?.answer], ["answered", { kind: "result", value: { charged: true } }]);
      await store.hostTasks.remove(["t1"]);
      assert.deepEqual(await store.hostTasks.get(["t1"]), []);

      await store.hostTasks.enqueue(task("t2"));
      const [second] = await store.hostTasks.claim({ tools: ["shop.charge"] }, 1, NOW);
      const failure = { code: "out_of_stock", message: "none left", retryable: false, details: { sku: "b-1" } };
      assert.equal(await store.hostTasks.answer("t2", second!.lease!, { kind: "failure", failure }, NOW + 1), "ok");
      assert.deepEqual((await store.hostTasks.get(["t2"]))[0]?.answer, { kind: "failure", failure });
    });

    test("withdrawn: a queued task disappears; a claimed one tells its worker `cancelled` and goes with its answer", async ({ store }) => {
      await store.hostTasks.enqueue(task("t_queued"));
      await store.hostTasks.withdraw("t_queued");
      assert.deepEqual(await store.hostTasks.claim({ tools: ["shop.*"] }, 5, NOW), []);
      assert.deepEqual(await store.hostTasks.list(), []);
      await store.hostTasks.enqueue(task("t_held"));
      const [held] = await store.hostTasks.claim({ tools: ["shop.*"] }, 5, NOW);
      await store.hostTasks.withdraw("t_held");
      assert.equal(await store.hostTasks.heartbeat("t_held", held!.lease!, NOW + 1), "cancelled");
      assert.equal(await store.hostTasks.answer("t_held", held!.lease!, { kind: "result", value: "late" }, NOW + 2), "cancelled");
      assert.deepEqual(await store.hostTasks.list(), [], "answered while withdrawn: done with");
      await store.hostTasks.withdraw("t_unknown");
    });

    test("a released task is queued again as if never claimed; only its lease releases it", async ({ store }) => {
      await store.hostTasks.enqueue(task("t1"));
      const [held] = await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
      await store.hostTasks.release("t1", "not-the-lease");
      assert.equal((await store.hostTasks.get(["t1"]))[0]?.state, "claimed");
      await store.hostTasks.release("t1", held!.lease!);
      assert.deepEqual((await store.hostTasks.get(["t1"]))[0], { ...task("t1"), state: "queued" });
      assert.equal(await store.hostTasks.heartbeat("t1", held!.lease!, NOW + 1), "lost");
      const [again] = await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW + 2);
      assert.ok(again?.lease !== undefined && again.lease !== held!.lease);
    });

    test("a lease that ends lapses the task once; a withdrawn task whose lease ends is deleted", async ({ store }) => {
      await store.hostTasks.enqueue(task("t1"));
      await store.hostTasks.enqueue(task("t2", { heartbeatTimeoutMs: 60_000 }));
      await store.hostTasks.enqueue(task("t3"));
      const held = await store.hostTasks.claim({ tools: ["shop.*"] }, 3, NOW);
      await store.hostTasks.withdraw("t3");
      assert.deepEqual(await store.hostTasks.expire(NOW + 29_999), []);
      const lapsed = await store.hostTasks.expire(NOW + 30_000);
      assert.deepEqual(
        lapsed.map((t) => [t.id, t.state, t.lease]),
        [["t1", "lapsed", undefined]],
      );
      assert.deepEqual(await store.hostTasks.expire(NOW + 30_001), [], "each once");
      assert.equal(await store.hostTasks.answer("t1", held[0]!.lease!, { kind: "result", value: 1 }, NOW + 30_002), "lost", "a late answer is refused");
      assert.deepEqual(
        (await store.hostTasks.list()).map((t) => [t.id, t.state]),
        [
          ["t1", "lapsed"],
          ["t2", "claimed"],
        ],
      );
    });

    test("the append that ends a run gives up its tasks in its commit: queued ones go, claimed ones are withdrawn; other runs keep theirs", async ({
      store,
    }) => {
      const run = { id: "run_end", toolsetId: "ts_a", source: "", js: "", sourceMap: "", input: null, status: "running", createdAt: NOW } as const;
      await store.createRun(run, []);
      await store.hostTasks.enqueue(task("t_held", { runId: "run_end", seq: 1 }));
      await store.hostTasks.enqueue(task("t_queued", { runId: "run_end", seq: 2 }));
      await store.hostTasks.enqueue(task("t_other"));
      const [held] = await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
      assert.equal(held?.id, "t_held");
      await store.append("run_end", [], { status: "running", updatedAt: NOW + 1 });
      assert.equal((await store.hostTasks.list()).length, 3, "a patch that does not end the run keeps them");
      await store.append("run_end", [], { status: "cancelled", updatedAt: NOW + 2 });
      assert.deepEqual(
        (await store.hostTasks.list()).map((t) => [t.id, t.state]),
        [
          ["t_held", "withdrawn"],
          ["t_other", "queued"],
        ],
      );
      assert.equal(await store.hostTasks.heartbeat("t_held", held.lease!, NOW + 3), "cancelled");
    });

    test("an append writes its patch's host tasks in its commit: queued (polls hear of them) or claimed under the staged lease; a refused append writes none", async ({
      store,
    }) => {
      const run = { id: "run_stage", toolsetId: "ts_a", source: "", js: "", sourceMap: "", input: null, status: "running", createdAt: NOW } as const;
      await store.createRun(run, []);
      const heard = listen(store, HOST_TASKS_TOPIC);
      const scheduled = (index: number, seq: number) =>
        ({ index, at: NOW, kind: "call.scheduled", seq, tool: "shop.charge", args: {}, key: `run_stage/${seq}` }) as const;
      await assert.rejects(
        store.append("run_stage", [scheduled(3, 1)], { updatedAt: NOW, hostTasks: [task("t_refused", { runId: "run_stage" })] }),
        isConflict,
        "an append that does not continue the journal is refused",
      );
      assert.deepEqual(await store.hostTasks.list(), [], "with the tasks of its patch");
      const claim = { lease: "lease_staged", leaseUntil: NOW + 30_000 };
      await store.append("run_stage", [scheduled(0, 1), scheduled(1, 2)], {
        updatedAt: NOW,
        hostTasks: [task("t_queued", { runId: "run_stage", seq: 1 }), { ...task("t_claimed", { runId: "run_stage", seq: 2 }), claim }],
      });
      assert.deepEqual(
        (await store.hostTasks.list()).map((t) => [t.id, t.state, t.lease, t.leaseUntil]),
        [
          ["t_queued", "queued", undefined, undefined],
          ["t_claimed", "claimed", "lease_staged", NOW + 30_000],
        ],
      );
      await eventually("polls hear of the queued task", () => Promise.resolve(heard.heard() > 0));
      heard.stop();
      assert.equal(await store.hostTasks.heartbeat("t_claimed", "lease_staged", NOW + 1), "ok", "the staged lease holds the claimed task");
      assert.deepEqual(ids(await store.hostTasks.claim({ tools: ["shop.*"] }, 5, NOW + 1)), ["t_queued"], "a claimed one is no poll's to take");
      await assert.rejects(
        store.append("run_stage", [scheduled(2, 1)], { updatedAt: NOW, hostTasks: [task("t_again", { runId: "run_stage", seq: 1 })] }),
        /queued already/,
        "an append queues first attempts only: one with a task is a bug, and nothing of the append is written",
      );
      assert.equal((await store.readJournal("run_stage")).length, 2);
    });

    test("list: by state, tools and audience, oldest first, at most limit", async ({ store }) => {
      await store.hostTasks.enqueue(task("t1", { audience: { namespace: "alice", toolsets: ["ts_a"] } }));
      await store.hostTasks.enqueue(task("t2", { tool: "mail.send" }));
      await store.hostTasks.enqueue(task("t3"));
      await store.hostTasks.claim({ tools: ["shop.*"], namespace: "alice" }, 1, NOW);
      assert.deepEqual(ids(await store.hostTasks.list({ states: ["queued"] })), ["t2", "t3"]);
      assert.deepEqual(ids(await store.hostTasks.list({ states: ["claimed"] })), ["t1"]);
      assert.deepEqual(ids(await store.hostTasks.list({ tools: ["shop.*"] })), ["t1", "t3"]);
      assert.deepEqual(ids(await store.hostTasks.list({ namespace: "alice" })), ["t1"]);
      assert.deepEqual(ids(await store.hostTasks.list({ limit: 2 })), ["t1", "t2"]);
    });

    test("queueing tells waiting polls; claims, answers and lapses tell the waiter, in this process and from another", async ({ store, peer }) => {
      const polls = listen(store, HOST_TASKS_TOPIC);
      const waiter = listen(store, hostTaskWaiterTopic("eng_a"));
      try {
        await store.hostTasks.enqueue(task("t1"));
        await eventually("a poll to hear of the task", () => Promise.resolve(polls.heard() > 0));
        const before = waiter.heard();
        const [held] = await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
        await eventually("the waiter to hear of the claim", () => Promise.resolve(waiter.heard() > before));
        const claimedHeard = waiter.heard();
        await store.hostTasks.answer("t1", held!.lease!, { kind: "result", value: 1 }, NOW + 1);
        await eventually("the waiter to hear of the answer", () => Promise.resolve(waiter.heard() > claimedHeard));
        await store.hostTasks.enqueue(task("t2"));
        await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
        const answeredHeard = waiter.heard();
        await store.hostTasks.expire(NOW + 60_000);
        await eventually("the waiter to hear of the lapse", () => Promise.resolve(waiter.heard() > answeredHeard));
        if (peer === undefined) return;
        const other = await peer();
        try {
          const heard = polls.heard();
          await other.hostTasks.enqueue(task("t3"));
          await eventually("a poll here to hear of a task queued by another process", () => Promise.resolve(polls.heard() > heard));
          const seen = waiter.heard();
          const [remote] = await other.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
          assert.equal(remote?.id, "t3");
          await other.hostTasks.answer("t3", remote.lease!, { kind: "result", value: "from elsewhere" }, NOW + 1);
          await eventually("the waiter here to hear of an answer given through another process", () => Promise.resolve(waiter.heard() > seen));
          assert.deepEqual((await store.hostTasks.get(["t3"]))[0]?.answer, { kind: "result", value: "from elsewhere" });
        } finally {
          await other.close();
        }
      } finally {
        polls.stop();
        waiter.stop();
      }
    });

    test("tasks are there after close and reopen, as they stood", async ({ store, reopen }, t) => {
      if (reopen === undefined) return t.skip("this store keeps nothing across opens");
      await store.hostTasks.enqueue(task("t_held"));
      await store.hostTasks.enqueue(task("t_queued"));
      const [held] = await store.hostTasks.claim({ tools: ["shop.*"] }, 1, NOW);
      await store.close();
      const again = await reopen();
      assert.deepEqual(
        (await again.hostTasks.list()).map((x) => [x.id, x.state]),
        [
          ["t_held", "claimed"],
          ["t_queued", "queued"],
        ],
      );
      assert.equal(await again.hostTasks.heartbeat(held!.id, held!.lease!, NOW + 1), "ok", "its lease still holds");
    });
  });
}
