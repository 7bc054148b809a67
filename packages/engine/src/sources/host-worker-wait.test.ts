import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { PolicySpec, RunWait } from "@tapedeck/protocol";
import { SqliteStore } from "../store/sqlite-store.js";
import { HostTaskQueue } from "./host-task-queue.js";
import { harnessToolset } from "../test-support/tool-harness.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { ManualClock } from "../test-support/manual-clock.js";

/**
 * A host tool's call while no worker serves it, on a clock the test moves (no real waiting):
 * waiting for a worker is not an attempt. There is no default attempt timeout; a timeout the
 * policy sets counts from when a worker takes the call; a `queueTimeout` fails the call with
 * `queue_timeout` (nothing was sent); and the run's waits say which call waits for a worker and
 * since when no worker that could take it has polled.
 */

after(() => testSandboxes().close());

const MINUTE = 60_000;

async function setup(policies: Record<string, PolicySpec> = {}) {
  const clock = new ManualClock();
  const store = SqliteStore.open({ path: ":memory:", durability: "off" });
  const queue = new HostTaskQueue(store, { clock });
  const t = await testEngine({ store, sources: { host: queue }, clock });
  const spec = harnessToolset(["crm.lookup_customer", "crm.charge", "crm.notify", "mail.send"], { policies: { "crm.charge": { timeout: "2m" }, ...policies } });
  const { id, toolset } = await t.engine.registerToolset(spec);
  const start = async (source: string) => {
    const started = await t.engine.start({ toolset: id, source: `import { crm } from "tapedeck:tools";\n${source}` });
    if (started.kind !== "started") throw new Error("refused");
    return started;
  };
  return { ...t, clock, queue, toolset, start };
}

/** Resolves once `check` holds; fails, saying what it waited for, if it does not within a few seconds of real time. */
async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** `promise`, or a clear failure if it does not settle within a few seconds of real time. */
function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen`)), 5_000)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe("host tools while no worker serves them", () => {
  it("pins no attempt timeout for host tools unless the policy sets one; queueTimeout only when set", async () => {
    const t = await setup({ "crm.notify": { queueTimeout: "30s" } });
    try {
      const policy = (name: string) => t.toolset.tools.find((tool) => tool.name === name)!.policy;
      assert.deepEqual([policy("lookup_customer").timeoutMs, policy("lookup_customer").queueTimeoutMs], [undefined, undefined]);
      assert.equal(policy("charge").timeoutMs, 2 * MINUTE);
      assert.equal(policy("notify").queueTimeoutMs, 30_000);
    } finally {
      await t.cleanup();
    }
  });

  it("a call waits as long as no worker comes, and the run's waits say so; the worker that comes takes it and the run goes on", async () => {
    const t = await setup();
    try {
      const watched = t.clock.now();
      t.clock.tick(5_000);
      assert.deepEqual(await t.queue.poll({ tools: ["crm.lookup_customer"], waitMs: 0 }), [], "a worker that could take the call polls, and finds nothing yet");
      t.clock.tick(15_000);
      assert.deepEqual(await t.queue.poll({ tools: ["mail.send"], waitMs: 0 }), [], "a worker for another tool polls later");
      const queuedAt = t.clock.now();
      const started = await t.start(`export default async () => crm.lookup_customer({ email: "ann@acme.test" });`);
      await until("the call to be queued", async () => ((await t.queue.pending()).queued === 1 ? true : undefined));
      t.clock.tick(10 * MINUTE);
      const waits = await until("the run's waits to name the call", async () => {
        const run = await t.engine.getRun(started.runId);
        return run.waits?.length ? run : undefined;
      });
      assert.equal(waits.status, "running");
      const expected: RunWait[] = [{ kind: "worker", seq: 1, tool: "crm.lookup_customer", since: queuedAt, lastPollAt: watched + 5_000 }];
      assert.deepEqual(waits.waits, expected);
      assert.deepEqual(await t.engine.pendingDecisions({ runId: started.runId }), [], "waiting for a worker is not a decision");
      const [task] = await t.queue.poll({ tools: ["crm.*"], waitMs: 0 });
      assert.equal(task?.attempt, 1, "waiting was not an attempt");
      assert.equal(await t.queue.complete(task.id, task.lease, { id: "cus_1" }), "ok");
      assert.deepEqual(await within("the run's end", started.end), { status: "completed", output: { id: "cus_1" } });
      assert.equal((await t.engine.getRun(started.runId)).waits, undefined);
      assert.deepEqual(
        (await t.engine.journal(started.runId)).map((e) => e.kind),
        ["run.started", "call.scheduled", "call.completed", "run.completed"],
      );
    } finally {
      await t.cleanup();
    }
  });

  it("a call taken at once by a waiting worker is never shown as waiting for one", async () => {
    const t = await setup();
    try {
      const polling = t.queue.poll({ tools: ["crm.*"], waitMs: 30_000 });
      const started = await t.start(`export default async () => crm.lookup_customer({});`);
      const [task] = await polling;
      t.clock.tick(30_000);
      assert.equal((await t.engine.getRun(started.runId)).waits, undefined);
      await t.queue.complete(task!.id, task!.lease, "found");
      assert.deepEqual(await within("the run's end", started.end), { status: "completed", output: "found" });
    } finally {
      await t.cleanup();
    }
  });

  it("a timeout the policy sets counts from when a worker takes the call, never while it waits for one", async () => {
    const t = await setup();
    try {
      const started = await t.start(
        `export default async () => { try { return await crm.charge({ cents: 500 }); } catch (e: any) { return [e.code, e.message]; } };`,
      );
      await until("the call to be queued", async () => ((await t.queue.pending()).queued === 1 ? true : undefined));
      t.clock.tick(10 * MINUTE);
      assert.equal((await t.engine.getRun(started.runId)).status, "running", "ten minutes in the queue are not two minutes of an attempt");
      const [task] = await t.queue.poll({ tools: ["crm.charge"], waitMs: 0 });
      assert.ok(task);
      // The worker heartbeats within its 60 s lease while the two minutes of the attempt run.
      for (const ms of [50_000, 50_000]) {
        t.clock.tick(ms);
        assert.equal(await t.queue.heartbeat(task.id, task.lease), "ok");
      }
      t.clock.tick(20_000);
      const end = await within("the timeout, two minutes after the worker took the call", started.end);
      assert.deepEqual(end, {
        status: "completed",
        output: [
          "timeout",
          "crm.charge did not answer within 120000 ms after a worker took it (attempt 1); its outcome is unknown. Raise the tool's timeout policy, or catch this error and decide.",
        ],
      });
      assert.equal(await t.queue.heartbeat(task.id, task.lease), "cancelled", "the worker hears that the attempt is over");
    } finally {
      await t.cleanup();
    }
  });

  it("a queueTimeout fails a call no worker took in time with queue_timeout: nothing was sent, and the queued attempt is withdrawn", async () => {
    const t = await setup({ "crm.notify": { queueTimeout: "30s" } });
    try {
      const started = await t.start(
        `export default async () => { try { return await crm.notify({ to: "ann" }); } catch (e: any) { return [e.code, e.message, e.retryable]; } };`,
      );
      await until("the call to be queued", async () => ((await t.queue.pending()).queued === 1 ? true : undefined));
      t.clock.tick(30_000);
      const end = await within("the queue timeout", started.end);
      assert.deepEqual(end, {
        status: "completed",
        output: [
          "queue_timeout",
          "No worker took the call to crm.notify within 30s, its queueTimeout policy (no worker has polled for it for 30 s): nothing was sent, so calling it again is safe once a worker serving crm.notify runs. Catch this error to go on without it, or try again later.",
          true,
        ],
      });
      assert.deepEqual(await t.queue.pending(), { queued: 0, claimed: 0 });
      assert.deepEqual(await t.queue.poll({ tools: ["crm.*"], waitMs: 0 }), [], "a worker that comes later gets nothing: the call ended");
      const failed = (await t.engine.journal(started.runId)).find((e) => e.kind === "call.failed");
      assert.equal(failed?.kind === "call.failed" ? failed.error.code : undefined, "queue_timeout");
    } finally {
      await t.cleanup();
    }
  });

  it("a user tool's invocations are bounded by the invoked tool's queueTimeout and timeout, as a script's calls are", async () => {
    const t = await setup({ "crm.notify": { queueTimeout: "30s" } });
    try {
      const { id } = await t.engine.registerToolset({
        ...harnessToolset(["crm.charge", "crm.notify"], { policies: { "crm.charge": { timeout: "2m" }, "crm.notify": { queueTimeout: "30s" } } }),
        userTools: {
          tools: {
            both: {
              description: "Notifies, then charges; answers each outcome's code.",
              code: `import { crm } from "tapedeck:tools";
                const code = (call: Promise<unknown>) => call.then(() => "ok", (e: { code: string }) => e.code);
                export default async () => [await code(crm.notify({ to: "ann" })), await code(crm.charge({ cents: 500 }))];`,
              grants: { tools: ["crm.notify", "crm.charge"] },
            },
          },
        },
      });
      const started = await t.engine.start({ toolset: id, source: `import { tools } from "tapedeck:tools";\nexport default async () => tools.both({});` });
      if (started.kind !== "started") assert.fail(JSON.stringify(started.diagnostics));
      await until("the notify invocation to be queued", async () => ((await t.queue.pending()).queued === 1 ? true : undefined));
      t.clock.tick(30_000);
      await until("the charge invocation to be queued", async () => (await t.queue.poll({ tools: ["crm.charge"], waitMs: 0 }))[0] ?? undefined);
      t.clock.tick(2 * MINUTE);
      const end = await within("both bounds", started.end);
      assert.deepEqual(end, { status: "completed", output: ["queue_timeout", "timeout"] });
      const subs = (await t.engine.journal(started.runId)).flatMap((e) =>
        e.kind === "call.sub" ? [`${e.tool} ${e.answer.ok ? "ok" : e.answer.error.code}`] : [],
      );
      assert.deepEqual(subs, ["crm.notify queue_timeout", "crm.charge timeout"], "each bound is the invocation's recorded answer");
      assert.deepEqual(await t.queue.pending(), { queued: 0, claimed: 0 }, "the queued attempt was withdrawn, the claimed one given up");
    } finally {
      await t.cleanup();
    }
  });

  it("refuses queueTimeout for a tool that is not a host tool", async () => {
    const t = await setup();
    try {
      await assert.rejects(
        t.engine.registerToolset({ http: { allow: ["api.github.com"] }, policies: { "http.fetch": { queueTimeout: "1m" } } }),
        /policies\["http\.fetch"\]\.queueTimeout: http\.fetch is not a host tool/,
      );
    } finally {
      await t.cleanup();
    }
  });
});
