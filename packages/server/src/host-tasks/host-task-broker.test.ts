import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { setImmediate as turn } from "node:timers/promises";
import { HostTaskQueue, openStore, type HostTaskAudience, type Store, type ToolCallRequest } from "@tapedeck/engine";
import type { PinnedTool } from "@tapedeck/protocol";
import { UNLIMITED } from "../tenancy/scope.js";
import { HostTaskBroker } from "./host-task-broker.js";

/**
 * The broker's own promises, in process: scopes and toolsets filter what a poll may claim, `max`
 * bounds it, a waiting poll is woken by a call it may see (and only by such a call), and ending
 * a poll or closing the broker answers everyone. Leases and heartbeats are the engine queue's
 * (tested with it); no timer fires here (heartbeat timeouts are an hour). The queue is the
 * store's (in memory here); who may claim a run's calls comes from the runs below.
 */
const runs: Record<string, HostTaskAudience> = {
  run_alice: { toolsets: ["ts_a"], namespace: "alice" },
  run_bob: { toolsets: ["ts_a"], namespace: "bob" },
  run_other: { toolsets: ["ts_b"], labels: { team: "red" } },
  run_derived: { toolsets: ["ts_c", "ts_b", "ts_root"], labels: { team: "red" } },
};

function tool(name: string): PinnedTool {
  const [group, tool] = name.split(".") as [string, string];
  return {
    group,
    name: tool,
    source: "host",
    description: "",
    inputSchema: {},
    policy: { onInterruption: "retry", timeoutMs: 3_600_000, heartbeatTimeoutMs: 3_600_000, concurrency: 16, approval: false },
  };
}

function call(broker: HostTaskBroker, runId: string, name: string, seq = 1, signal = new AbortController().signal) {
  const request: ToolCallRequest = {
    tool: tool(name),
    args: { seq },
    runId,
    seq,
    idempotencyKey: `${runId}/${seq}`,
    attempt: 1,
    traceparent: "00-0-0-00",
    signal,
  };
  return broker.call(request);
}

const opened: { broker: HostTaskBroker; store: Store }[] = [];
const broker = async (): Promise<HostTaskBroker> => {
  const store = await openStore("memory:", { durability: "off" });
  const b = new HostTaskBroker(new HostTaskQueue(store, { audience: (runId) => Promise.resolve(runs[runId]) }));
  opened.push({ broker: b, store });
  return b;
};

// Claimed tasks hold lease timers: a failed test must not leave them keeping the process up.
after(() => Promise.all(opened.map(async ({ broker: b, store }) => (await b.close(), await store.close()))));

describe("host task broker", () => {
  it("a poll claims only what its scope and toolset see, at most `max`", async () => {
    const b = await broker();
    const outcomes = [
      call(b, "run_alice", "shop.price", 1),
      call(b, "run_bob", "shop.price", 1),
      call(b, "run_alice", "shop.price", 2),
      call(b, "run_other", "shop.price", 1),
    ];
    // One turn of the event loop (no time passes): the calls' run look-ups settle and they are queued.
    await turn();
    const alice = await b.poll({ scope: { namespace: "alice", labels: {} }, tools: ["shop.*"], waitMs: 0, max: 5 });
    assert.deepEqual(alice.map((t) => t.idempotencyKey).sort(), ["run_alice/1", "run_alice/2"]);
    assert.deepEqual(await b.poll({ scope: { labels: { team: "blue" } }, tools: ["shop.price"], waitMs: 0, max: 5 }), []);
    const one = await b.poll({ scope: UNLIMITED, tools: ["shop.price"], waitMs: 0, max: 1, toolset: "ts_b" });
    assert.deepEqual(
      one.map((t) => t.idempotencyKey),
      ["run_other/1"],
    );
    const rest = await b.poll({ scope: UNLIMITED, tools: ["shop.price"], waitMs: 0, max: 5 });
    assert.deepEqual(
      rest.map((t) => t.idempotencyKey),
      ["run_bob/1"],
    );
    for (const task of [...alice, ...one, ...rest]) {
      assert.equal(await b.complete({ namespace: "mallory", labels: {} }, task.id, task.lease, "stolen"), "lost", "outside the scope: lost");
      assert.equal(await b.complete(UNLIMITED, task.id, task.lease, task.idempotencyKey), "ok");
    }
    assert.deepEqual(
      await Promise.all(outcomes),
      ["run_alice/1", "run_bob/1", "run_alice/2", "run_other/1"].map((value) => ({ kind: "result", value })),
    );
    assert.equal(await b.heartbeat(UNLIMITED, alice[0]!.id, alice[0]!.lease), "lost", "a settled run's tasks are gone");
  });

  it("a poll for a toolset also claims the calls of runs on toolsets derived from it (a saved workflow's), not of the toolsets it derives from", async () => {
    const b = await broker();
    const outcomes = [call(b, "run_derived", "shop.price", 1), call(b, "run_other", "shop.price", 1), call(b, "run_derived", "shop.price", 2)];
    await turn();
    const own = await b.poll({ scope: UNLIMITED, tools: ["shop.price"], waitMs: 0, max: 1, toolset: "ts_c" });
    assert.deepEqual(
      own.map((t) => t.idempotencyKey),
      ["run_derived/1"],
    );
    const derived = await b.poll({ scope: UNLIMITED, tools: ["shop.price"], waitMs: 0, max: 5, toolset: "ts_root" });
    assert.deepEqual(
      derived.map((t) => t.idempotencyKey),
      ["run_derived/2"],
      "two derivations down; run_other's ts_b does not derive from ts_root",
    );
    const base = await b.poll({ scope: UNLIMITED, tools: ["shop.price"], waitMs: 0, max: 5, toolset: "ts_b" });
    assert.deepEqual(
      base.map((t) => t.idempotencyKey),
      ["run_other/1"],
    );
    for (const task of [...own, ...derived, ...base]) assert.equal(await b.complete(UNLIMITED, task.id, task.lease, task.idempotencyKey), "ok");
    assert.deepEqual(
      await Promise.all(outcomes),
      ["run_derived/1", "run_other/1", "run_derived/2"].map((value) => ({ kind: "result", value })),
    );
  });

  it("a waiting poll is woken by a call it may see, not by one it may not", async () => {
    const b = await broker();
    const waiting = b.poll({ scope: { namespace: "alice", labels: {} }, tools: ["shop.price"], waitMs: 3_600_000, max: 1 });
    const bob = call(b, "run_bob", "shop.price");
    const wrongTool = call(b, "run_alice", "mail.send");
    const alice = call(b, "run_alice", "shop.price", 2);
    const [task] = await waiting;
    assert.equal(task?.idempotencyKey, "run_alice/2");
    assert.equal(await b.fail(UNLIMITED, task.id, task.lease, { code: "out_of_stock", message: "none" }), "ok");
    assert.deepEqual(await alice, { kind: "failure", failure: { code: "out_of_stock", message: "none" } });
    await b.close();
    assert.deepEqual(await Promise.all([bob, wrongTool]), [
      { kind: "interrupted", reason: "the engine closed" },
      { kind: "interrupted", reason: "the engine closed" },
    ]);
  });

  it("a poll ends empty when its signal aborts or the broker closes; a call for a run that cannot be read is an interruption", async () => {
    const b = await broker();
    const controller = new AbortController();
    const aborted = b.poll({ scope: UNLIMITED, tools: ["shop.*"], waitMs: 3_600_000, max: 1, signal: controller.signal });
    const closed = b.poll({ scope: UNLIMITED, tools: ["shop.*"], waitMs: 3_600_000, max: 1 });
    controller.abort();
    assert.deepEqual(await aborted, []);
    const missing = await call(b, "run_missing", "shop.price");
    assert.equal(missing.kind, "interrupted");
    await b.close();
    assert.deepEqual(await closed, []);
    assert.deepEqual(await b.poll({ scope: UNLIMITED, tools: ["shop.*"], waitMs: 3_600_000, max: 1 }), []);
  });
});
