import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { SandboxLostError, SandboxStoppedError, type Sandbox, type SandboxFactory } from "./sandbox/sandbox.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

/**
 * Sandboxes whose worker "dies" at chosen deliveries (counted across the factory), or at chosen
 * starts (counted the same way). `culprit`: the run's own request was running (its script may be
 * the cause), rather than a neighbour's.
 */
function dyingSandboxes(
  dieAt: ReadonlySet<number>,
  options: { culprit?: boolean; dieAtStart?: ReadonlySet<number> } = {},
): SandboxFactory & { created: number } {
  let deliveries = 0;
  let starts = 0;
  const culprit = options.culprit === true;
  const factory = {
    created: 0,
    close: () => Promise.resolve(),
    create: async (sandboxOptions: Parameters<SandboxFactory["create"]>[0]): Promise<Sandbox> => {
      factory.created++;
      const real = await testSandboxes().create(sandboxOptions);
      return {
        start: async () => {
          if (options.dieAtStart?.has(++starts)) {
            await real.dispose();
            throw new SandboxLostError("its worker ended unexpectedly (simulated, while replaying)", culprit);
          }
          return real.start();
        },
        replay: (d) => real.replay(d),
        dispose: () => real.dispose(),
        // Outcomes that arrive together go in one hop: the hop dies if any of them was to.
        deliverEach: async (batch) => {
          const first = deliveries + 1;
          deliveries += batch.length;
          if (batch.some((_, i) => dieAt.has(first + i))) {
            await real.dispose();
            throw new SandboxLostError(`its worker ended unexpectedly (simulated${batch.length > 1 ? ", during a batch" : ""})`, culprit);
          }
          return real.deliverEach(batch);
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

  it("a run whose own script keeps losing its sandbox is failed past the rebuild limit, with an error that says so", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i });
    const sandboxes = dyingSandboxes(new Set([1, 2, 3, 4, 5, 6, 7, 8]), { culprit: true });
    const t = await testEngine({ hostTools: tools.module(), sandboxes });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["n.next"]),
        `import { n } from "tapedeck:tools";\nexport default async () => n.next({ i: 1 });`,
      );
      assert.equal(end.status, "failed", JSON.stringify(end));
      if (end.status !== "failed") return;
      assert.equal(end.error.kind, "internal");
      assert.match(end.error.message, /The sandbox running this script was lost 4 times while running it .*simulated.*fork the run/);
      assert.equal(sandboxes.created, 4, "three rebuilds, then no more");
      assert.equal(tools.calls.length, 1, "the call was sent once");
      assert.equal((await t.engine.getRun(runId)).status, "failed");
    } finally {
      await t.cleanup();
    }
  });

  it("losses caused by a neighbour's script are not held against the run: it is rebuilt as often as that happens", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i });
    const sandboxes = dyingSandboxes(new Set([1, 2, 3, 4, 5, 6, 7, 8]));
    const t = await testEngine({ hostTools: tools.module(), sandboxes });
    try {
      const { end } = await runScript(
        t.engine,
        harnessToolset(["n.next"]),
        `import { n } from "tapedeck:tools";\nexport default async () => n.next({ i: 1 });`,
      );
      assert.deepEqual(end, { status: "completed", output: 1 });
      assert.equal(sandboxes.created, 9);
      assert.equal(tools.calls.length, 1, "the call was sent once");
    } finally {
      await t.cleanup();
    }
  });

  it("a sandbox lost while the journal is replayed into it (a resume, a wake) is rebuilt too, not left running", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i + 1 });
    const sandboxes = dyingSandboxes(new Set(), { dieAtStart: new Set([1, 2]) });
    const t = await testEngine({ hostTools: tools.module(), sandboxes });
    try {
      const { end } = await runScript(
        t.engine,
        harnessToolset(["n.next"]),
        `import { n } from "tapedeck:tools";\nexport default async () => n.next({ i: 1 });`,
      );
      assert.deepEqual(end, { status: "completed", output: 2 });
      assert.equal(sandboxes.created, 3);
    } finally {
      await t.cleanup();
    }
  });

  it("a sandbox the watchdog stopped is not rebuilt: the run fails with the limit, and its last outcome is journaled with the end", async () => {
    const tools = new ToolHarness({ "n.next": (a: { i: number }) => a.i });
    let created = 0;
    const stopping: SandboxFactory = {
      close: () => Promise.resolve(),
      create: async (options) => {
        created++;
        const real = await testSandboxes().create(options);
        return {
          start: () => real.start(),
          replay: (d) => real.replay(d),
          dispose: () => real.dispose(),
          deliverEach: async () => {
            await real.dispose();
            throw new SandboxStoppedError({ kind: "limit", name: "LimitError", message: "stuck inside a built-in (simulated)" });
          },
        };
      },
    };
    const t = await testEngine({ hostTools: tools.module(), sandboxes: stopping });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["n.next"]),
        `import { n } from "tapedeck:tools";\nexport default async () => n.next({ i: 1 });`,
      );
      assert.equal(end.status, "failed");
      if (end.status !== "failed") return;
      assert.deepEqual([end.error.kind, end.error.message], ["limit", "stuck inside a built-in (simulated)"]);
      assert.equal(created, 1, "not rebuilt");
      const kinds = (await t.engine.journal(runId)).map((e) => e.kind);
      assert.deepEqual(kinds.slice(-2), ["call.completed", "run.failed"]);
    } finally {
      await t.cleanup();
    }
  });
});
