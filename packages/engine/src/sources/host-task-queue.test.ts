import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { PolicySpec } from "@tapedeck/protocol";
import { Engine } from "../engine.js";
import { SqliteStore } from "../store/sqlite-store.js";
import { HostTaskQueue, type HostTask } from "./host-task-queue.js";
import { harnessToolset } from "../test-support/tool-harness.js";
import { tempDir, testEngine, testSandboxes } from "../test-support/engines.js";
import { ManualClock } from "../test-support/manual-clock.js";

after(() => testSandboxes().close());

/** An engine whose host tools are served by workers through a queue; the test plays the workers. */
async function setup(policies: Record<string, PolicySpec> = {}) {
  const clock = new ManualClock();
  const store = SqliteStore.open({ path: ":memory:", durability: "off" });
  const queue = new HostTaskQueue(store, { clock });
  const t = await testEngine({ store, sources: { host: queue }, clock });
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
      assert.equal(await t.queue.heartbeat(task.id, task.lease), "ok");
      t.clock.tick(20_000);
      assert.equal(await t.queue.complete(task.id, task.lease, { charged: true }), "ok");
      assert.deepEqual(await started.end, { status: "completed", output: { charged: true } });
      assert.equal(await t.queue.complete(task.id, task.lease, { charged: true }), "lost", "a task is answered once");
      assert.deepEqual(await t.queue.pending(), { queued: 0, claimed: 0 });
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
      assert.equal(await t.queue.complete(first.id, first.lease, "late"), "lost");
      assert.equal(await t.queue.complete(second.id, second.lease, "done"), "ok");
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
      assert.equal(await t.queue.fail(shop.id, shop.lease, { code: "out_of_stock", message: "none left" }), "ok");
      assert.equal(await t.queue.complete(mail.id, mail.lease, "sent"), "ok");
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
      assert.equal((await t.queue.pending()).queued, 0);
      assert.equal(await t.queue.heartbeat(claimed.id, claimed.lease), "cancelled");
      assert.equal(await t.queue.complete(claimed.id, claimed.lease, "too late"), "cancelled");
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

  it("a call no worker took when the engine closed stays queued for the engine that resumes the run: sent as the same attempt, so an at_most_once tool is served", async () => {
    const dir = tempDir();
    const clock = new ManualClock();
    const sandboxes = { create: (o: Parameters<ReturnType<typeof testSandboxes>["create"]>[0]) => testSandboxes().create(o), close: () => Promise.resolve() };
    const open = async () => {
      const store = SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "normal" });
      const queue = new HostTaskQueue(store, { clock });
      return { queue, engine: await Engine.open({ store, sources: { host: queue }, clock, sandboxes }) };
    };
    try {
      const first = await open();
      const { id } = await first.engine.registerToolset(harnessToolset(["mail.send"], { policies: { "mail.send": { onInterruption: "at_most_once" } } }));
      const started = await first.engine.start({
        toolset: id,
        source: `import { mail } from "tapedeck:tools";\nexport default async () => { try { return await mail.send({ to: "ann" }); } catch (e: any) { return e.code; } };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      started.end.catch(() => {});
      for (const deadline = Date.now() + 5_000; (await first.queue.pending()).queued !== 1;) {
        if (Date.now() > deadline) throw new Error("the call was never queued");
        await new Promise((resolve) => setImmediate(resolve));
      }
      await first.engine.close();

      const second = await open();
      try {
        const [resumed] = await second.engine.resume(started.runId);
        // A run that does not send the call again ends on its own: that end is the failure.
        const polled = second.queue.poll({ tools: ["mail.*"], waitMs: 60_000 }).then((tasks) => ({ tasks }));
        const first = await Promise.race([polled, resumed!.end.then((end) => ({ end }))]);
        assert.ok("tasks" in first, `the resumed run ended without sending the call: ${JSON.stringify(first)}`);
        const [task] = first.tasks;
        assert.deepEqual([task?.idempotencyKey, task?.attempt], [`${started.runId}/1`, 1], "the attempt the first engine queued");
        assert.equal(await second.queue.complete(task!.id, task!.lease, "sent"), "ok");
        assert.deepEqual(await resumed!.end, { status: "completed", output: "sent" });
        assert.deepEqual(
          (await second.engine.journal(started.runId)).map((e) => e.kind),
          ["run.started", "call.scheduled", "call.completed", "run.completed"],
        );
      } finally {
        await second.engine.close();
      }
    } finally {
      dir.cleanup();
    }
  });
});
