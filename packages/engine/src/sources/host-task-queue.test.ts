import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { PolicySpec } from "@tapedeck/protocol";
import { HostTaskQueue, type HostTask } from "./host-task-queue.js";
import { harnessToolset } from "../test-support/tool-harness.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { ManualClock } from "../test-support/manual-clock.js";

after(() => testSandboxes().close());

/** An engine whose host tools are served by workers through a queue; the test plays the workers. */
async function setup(policies: Record<string, PolicySpec> = {}) {
  const clock = new ManualClock();
  const queue = new HostTaskQueue(clock);
  const t = await testEngine({ sources: { host: queue }, clock });
  const { id } = await t.engine.registerToolset(
    harnessToolset(["shop.charge", "shop.price", "mail.send"], { policies: { "shop.*": { heartbeatTimeout: "30s" }, ...policies } }),
  );
  const start = async (source: string) => {
    const started = await t.engine.start({ toolset: id, source: `import { shop, mail } from "tapedeck:tools";\n${source}` });
    if (started.kind !== "started") throw new Error("refused");
    return started;
  };
  const take = async (tools = ["shop.*"]): Promise<HostTask> => {
    const [task] = await queue.poll({ tools, waitMs: 60_000 });
    if (!task) throw new Error("the poll ended without a task");
    return task;
  };
  return { ...t, clock, queue, start, take };
}

describe("host tools served by workers", () => {
  it("a worker polls, claims, heartbeats and completes; the script gets the result; the key is the run's", async () => {
    const t = await setup();
    try {
      const polling = t.take();
      const started = await t.start(`export default async () => shop.charge({ cents: 500 });`);
      const task = await polling;
      assert.deepEqual(
        [task.tool, task.args, task.idempotencyKey, task.attempt, task.heartbeatTimeoutMs],
        ["shop.charge", { cents: 500 }, `${started.runId}/1`, 1, 30_000],
      );
      t.clock.tick(20_000);
      assert.equal(t.queue.heartbeat(task.id, task.lease), "ok");
      t.clock.tick(20_000);
      assert.equal(t.queue.complete(task.id, task.lease, { charged: true }), "ok");
      assert.deepEqual(await started.end, { status: "completed", output: { charged: true } });
      assert.equal(t.queue.complete(task.id, task.lease, { charged: true }), "lost", "a task is answered once");
      assert.deepEqual(t.queue.pending, { queued: 0, claimed: 0 });
    } finally {
      await t.cleanup();
    }
  });

  it("a worker that dies mid-call (missed heartbeat) interrupts the attempt: retried with the same key; its late answer is refused", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => shop.charge({ cents: 1 });`);
      const first = await t.take();
      t.clock.tick(30_000);
      const second = await t.take();
      assert.deepEqual([second.idempotencyKey, second.attempt], [first.idempotencyKey, 2]);
      assert.equal(t.queue.complete(first.id, first.lease, "late"), "lost");
      assert.equal(t.queue.complete(second.id, second.lease, "done"), "ok");
      assert.deepEqual(await started.end, { status: "completed", output: "done" });
      const attempts = (await t.engine.journal(started.runId)).filter((e) => e.kind === "call.attempt");
      assert.match(attempts[0]?.kind === "call.attempt" ? attempts[0].reason : "", /the worker missed its heartbeat \(no sign of life for 30000 ms\)/);
    } finally {
      await t.cleanup();
    }
  });

  it("under at_most_once a missed heartbeat ends the call with outcomeUnknown", async () => {
    const t = await setup({ "shop.charge": { onInterruption: "at_most_once" } });
    try {
      const started = await t.start(`export default async () => { try { return await shop.charge({}); } catch (e: any) { return e.code; } };`);
      await t.take();
      t.clock.tick(30_000);
      assert.deepEqual(await started.end, { status: "completed", output: "outcomeUnknown" });
    } finally {
      await t.cleanup();
    }
  });

  it("a worker failure is the script's ToolError, never retried; workers get only the tools they serve", async () => {
    const t = await setup();
    try {
      const started = await t.start(
        `export default async () => { const r = await Promise.allSettled([shop.price({}), mail.send({})]); return r.map((x) => x.status === "fulfilled" ? x.value : (x.reason as any).code); };`,
      );
      const mail = await t.take(["mail.send"]);
      assert.equal(mail.tool, "mail.send");
      const shop = await t.take(["shop.price"]);
      assert.equal(t.queue.fail(shop.id, shop.lease, { code: "out_of_stock", message: "none left" }), "ok");
      assert.equal(t.queue.complete(mail.id, mail.lease, "sent"), "ok");
      assert.deepEqual(await started.end, { status: "completed", output: ["out_of_stock", "sent"] });
    } finally {
      await t.cleanup();
    }
  });

  it("cancelling the run withdraws its tasks: a queued one disappears, a claimed one hears `cancelled`", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => Promise.all([shop.charge({ n: 1 }), shop.charge({ n: 2 })]);`);
      const claimed = await t.take();
      await t.engine.cancel(started.runId);
      assert.equal(t.queue.pending.queued, 0);
      assert.equal(t.queue.heartbeat(claimed.id, claimed.lease), "cancelled");
      assert.equal(t.queue.complete(claimed.id, claimed.lease, "too late"), "cancelled");
      assert.deepEqual(await t.queue.poll({ tools: ["shop.*"], waitMs: 0 }), []);
    } finally {
      await t.cleanup();
    }
  });

  it("an empty poll ends after its wait, or when its request is aborted", async () => {
    const t = await setup();
    try {
      const waiting = t.queue.poll({ tools: ["shop.*"], waitMs: 10_000 });
      t.clock.tick(10_000);
      assert.deepEqual(await waiting, []);
      const controller = new AbortController();
      const aborted = t.queue.poll({ tools: ["shop.*"], waitMs: 10_000, signal: controller.signal });
      controller.abort();
      assert.deepEqual(await aborted, []);
    } finally {
      await t.cleanup();
    }
  });
});
