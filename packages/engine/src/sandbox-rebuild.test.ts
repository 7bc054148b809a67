import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { SandboxLostError, type Sandbox, type SandboxFactory } from "./sandbox/sandbox.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

/** Sandboxes whose worker "dies" at chosen deliveries (counted across the factory). */
function dyingSandboxes(dieAt: ReadonlySet<number>): SandboxFactory & { created: number } {
  let deliveries = 0;
  const factory = {
    created: 0,
    close: () => Promise.resolve(),
    create: async (options: Parameters<SandboxFactory["create"]>[0]): Promise<Sandbox> => {
      factory.created++;
      const real = await testSandboxes().create(options);
      return {
        start: () => real.start(),
        replay: (d) => real.replay(d),
        dispose: () => real.dispose(),
        deliver: async (delivery) => {
          if (dieAt.has(++deliveries)) {
            await real.dispose();
            throw new SandboxLostError("its worker ended unexpectedly (simulated)");
          }
          return real.deliver(delivery);
        },
        // Outcomes that arrive together go in one hop: the hop dies if any of them was to.
        deliverEach: async (batch) => {
          const first = deliveries + 1;
          deliveries += batch.length;
          if (batch.some((_, i) => dieAt.has(first + i))) {
            await real.dispose();
            throw new SandboxLostError("its worker ended unexpectedly (simulated, during a batch)");
          }
          return real.deliverEach!(batch);
        },
      };
    },
  };
  return factory;
}

describe("a sandbox lost under a run", () => {
  it("is rebuilt by replay: the run completes, no call is sent twice, the journal replays", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i * 2 });
    const sandboxes = dyingSandboxes(new Set([2, 5]));
    const t = await testEngine({ hostTools: tools.module(), sandboxes });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["n.next"]),
        `import { n } from "tapedeck:tools";
         export default async () => {
           const out: unknown[] = [];
           for (let i = 0; i < 6; i++) { out.push(await n.next({ i })); console.log("step", i); }
           const [a, b] = await Promise.all([n.next({ i: 10 }), n.next({ i: 11 })]);
           return { out, a, b, r: Math.floor(Math.random() * 1000) };
         }`,
      );
      assert.equal(end.status, "completed", JSON.stringify(end));
      const output = (end as unknown as { output: { out: number[]; a: number; b: number } }).output;
      assert.deepEqual(output.out, [0, 2, 4, 6, 8, 10]);
      assert.deepEqual([output.a, output.b], [20, 22]);
      assert.equal(sandboxes.created, 3, "two rebuilds");
      assert.equal(tools.calls.length, 8, "no call was sent twice");
      const journal = await t.engine.journal(runId);
      assert.equal(journal.filter((e) => e.kind === "log").length, 6, "no log line journaled twice");
      const verified = await t.engine.verify(runId);
      assert.ok(verified.ok && verified.end?.status === "completed");
    } finally {
      await t.cleanup();
    }
  });

  it("a hop of outcomes delivered together that dies is delivered again to the rebuilt sandbox: every call once, the journal replays", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i * 3 });
    const sandboxes = dyingSandboxes(new Set([1, 2, 3]));
    const t = await testEngine({ hostTools: tools.module(), sandboxes });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["n.next"]),
        `import { n } from "tapedeck:tools";\nexport default async () => Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => n.next({ i })));`,
      );
      assert.deepEqual(end, { status: "completed", output: [0, 3, 6, 9, 12, 15, 18, 21] });
      assert.ok(sandboxes.created >= 2, "rebuilt");
      assert.equal(tools.calls.length, 8, "no call was sent twice");
      const verified = await t.engine.verify(runId);
      assert.ok(verified.ok && verified.end?.status === "completed");
    } finally {
      await t.cleanup();
    }
  });

  it("past the rebuild limit, the run is left running for resume, intact", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i });
    const t = await testEngine({ hostTools: tools.module(), sandboxes: dyingSandboxes(new Set([1, 2, 3, 4, 5, 6, 7, 8])) });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["n.next"]));
      const started = await t.engine.start({ toolset: id, source: `import { n } from "tapedeck:tools";\nexport default async () => n.next({ i: 1 });` });
      if (started.kind !== "started") throw new Error("refused");
      await assert.rejects(started.end, SandboxLostError);
      assert.equal((await t.engine.getRun(started.runId)).status, "running");
      const reopened = await t.reopen({ hostTools: tools.module() });
      try {
        const [resumed] = await reopened.resume(started.runId);
        assert.deepEqual(await resumed!.end, { status: "completed", output: 1 });
        assert.equal(tools.calls.length, 2, "the one call was interrupted by the stop and re-sent once on resume");
      } finally {
        await reopened.close();
      }
    } finally {
      await t.cleanup();
    }
  });
});
