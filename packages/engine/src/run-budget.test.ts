/**
 * Run budgets (`RunBudget`, `runs/run-budget.ts`) through the engine's public entry, on SQLite
 * and on PostgreSQL: a script that loops on a tool fails `budget_exceeded` at exactly the limit,
 * with the call past it never reaching the tool (host tools that count their calls); per tool;
 * bytes of results; child runs; and a budget spent before a crash still counts after the resume.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JournalEntry, RunEnd, RunError, ToolsetSpec } from "@tapedeck/protocol";
import type { Store } from "./store/store.js";
import { PostgresStore } from "./store/postgres/postgres-store.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "./store/contracts/postgres-test-database.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { tempDir, testEngine, testSandboxes, type TestEngineOptions } from "./test-support/engines.js";
import { join } from "node:path";
import { EngineError } from "./errors.js";

after(() => testSandboxes().close());

/** Opens the same database again and again (a restart), and drops it at the end. */
interface StoreFactory {
  open(): Promise<Store>;
  drop(): Promise<void>;
}

const LOOP = `import { c } from "tapedeck:tools";
export default async () => { for (let i = 0; ; i++) await c.count({ i }); };`;

function budgetError(end: RunEnd): RunError {
  if (end.status !== "failed") return assert.fail(`the run ${end.status}, it should have failed`);
  assert.equal(end.error.failure?.code, "budget_exceeded", end.error.message);
  return end.error;
}

const toolCalls = (journal: readonly JournalEntry[], tool: string) => journal.filter((e) => e.kind === "call.scheduled" && e.tool === tool).length;

function budgetSuite(name: string, factory: () => Promise<StoreFactory>): void {
  describe(`run budgets (${name})`, { timeout: 120_000 }, () => {
    async function setup(tools: Record<string, (args: never) => unknown>, more: TestEngineOptions = {}) {
      const stores = await factory();
      const harness = new ToolHarness(tools);
      const t = await testEngine({ store: await stores.open(), hostTools: harness.module(), ...more });
      const start = async (spec: ToolsetSpec, source: string, budget?: Parameters<typeof t.engine.start>[0]["budget"]) => {
        const { id } = await t.engine.registerToolset(spec);
        const started = await t.engine.start({ toolset: id, source, ...(budget === undefined ? {} : { budget }) });
        if (started.kind === "refused") return assert.fail(started.diagnostics.map((d) => d.message).join("\n"));
        return started;
      };
      return {
        ...t,
        stores,
        harness,
        start,
        done: async () => {
          await t.cleanup();
          await stores.drop();
        },
      };
    }

    it("maxCalls: a loop fails budget_exceeded at exactly N calls; call N + 1 never reaches the tool", async () => {
      const t = await setup({ "c.count": () => "ok" });
      try {
        const started = await t.start(harnessToolset(["c.count"]), LOOP, { maxCalls: 7 });
        const error = budgetError(await started.end);
        assert.equal(t.harness.calls.length, 7, "the tool saw exactly 7 calls");
        assert.deepEqual(error.failure?.details, { budget: "maxCalls", limit: 7 });
        assert.deepEqual(error.call, { seq: 8, tool: "c.count" });
        assert.match(error.message, /budget of 7 tool calls \(maxCalls\) ran out: call #8 \(c\.count\) was not sent/);
        const journal = await t.engine.journal(started.runId);
        assert.equal(toolCalls(journal, "c.count"), 7, "call #8 was never journaled");
        assert.equal(journal.at(-1)?.kind, "run.failed", "the failure is journaled");
        assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end: await started.end });
      } finally {
        await t.done();
      }
    });

    it("maxCallsPerTool (in the toolset): the limited tool stops the run; the other tools' calls are not limited by it", async () => {
      const t = await setup({ "c.a": () => 1, "c.b": () => 2 });
      try {
        const spec = harnessToolset(["c.a", "c.b"], { budget: { maxCallsPerTool: { "c.a": 3 } } });
        const started = await t.start(
          spec,
          `import { c } from "tapedeck:tools";
export default async () => { for (;;) { await c.b({}); await c.b({}); await c.a({}); } };`,
        );
        const error = budgetError(await started.end);
        assert.deepEqual([t.harness.calls.filter((c) => c.tool === "c.a").length, t.harness.calls.filter((c) => c.tool === "c.b").length], [3, 8]);
        assert.deepEqual(error.failure?.details, { budget: "maxCallsPerTool", limit: 3, tool: "c.a" });
        assert.match(error.message, /3 calls of c\.a \(maxCallsPerTool\) ran out/);
      } finally {
        await t.done();
      }
    });

    it("maxResultBytes: the result that takes the bytes received past the budget fails the run, undelivered", async () => {
      const big = "x".repeat(998); // 1,000 bytes as JSON
      const t = await setup({ "c.count": () => big });
      try {
        const started = await t.start(harnessToolset(["c.count"]), LOOP, { maxResultBytes: 2_500 });
        const error = budgetError(await started.end);
        assert.equal(t.harness.calls.length, 3, "the third result took the run past 2,500 bytes");
        assert.deepEqual(error.failure?.details, { budget: "maxResultBytes", limit: 2500, tool: "c.count" });
        assert.match(
          error.message,
          /2500 bytes of tool results \(maxResultBytes\) ran out: call #3 \(c\.count\) was answered but its result of 1000 bytes brought the results received to 3000 bytes/,
        );
      } finally {
        await t.done();
      }
    });

    it("maxChildRuns: the workflow start past the budget starts no run", async () => {
      const t = await setup({ "w.step": () => ({}) });
      try {
        const base = await t.engine.registerToolset(harnessToolset(["w.step"], { budget: { maxChildRuns: 2 } }));
        const saved = await t.engine.saveWorkflow({
          toolset: base.id,
          name: "child",
          description: "Does nothing.",
          source: `export default async (input: { n: number }): Promise<{ n: number }> => input;`,
          input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
          output: { type: "object" },
        });
        if (saved.kind !== "saved") return assert.fail("refused");
        assert.deepEqual(saved.toolset.budget, { maxChildRuns: 2 }, "the derived toolset keeps its base's budget");
        const started = await t.engine.start({
          toolset: saved.id,
          source: `export default async () => { for (let n = 0; ; n++) await (await workflows.child.start({ n })).result(); };`,
        });
        if (started.kind !== "started") return assert.fail("refused");
        const error = budgetError(await started.end);
        assert.deepEqual(error.failure?.details, { budget: "maxChildRuns", limit: 2 });
        const children = (await t.engine.listRuns({ limit: 100 })).filter((run) => run.caller?.runId === started.runId);
        assert.equal(children.length, 2);
      } finally {
        await t.done();
      }
    });

    it("a budget spent before a crash still counts after the resume: the run stops at N in all", async () => {
      const first = new ToolHarness({ "c.count": () => "first" });
      const t = await setup({}, { hostTools: first.module() });
      try {
        const spec = harnessToolset(["c.count"]);
        first.hold("c.count");
        const started = await t.start(
          spec,
          `import { c } from "tapedeck:tools";
export default async () => { for (let i = 0; ; i++) await c.count({ i }); };`,
          { maxCalls: 5 },
        );
        // Calls 1 and 2 answered, call 3 in flight when the engine stops.
        await first.heldCount(1);
        first.release(0);
        await first.heldCount(1);
        first.release(0);
        await first.heldCount(1);
        assert.equal(first.calls.length, 3);
        await t.engine.close();

        const second = new ToolHarness({ "c.count": () => "second" });
        const engine = await t.reopen({ store: await t.stores.open(), hostTools: second.module() });
        try {
          const [resumed] = await engine.resume(started.runId);
          const error = budgetError(await resumed!.end);
          assert.deepEqual(error.call, { seq: 6, tool: "c.count" });
          // Call 3 again (its second attempt), then 4 and 5: five calls in all, as the budget says.
          assert.deepEqual(
            second.calls.map((c) => [c.args, c.attempt]),
            [
              [{ i: 2 }, 2],
              [{ i: 3 }, 1],
              [{ i: 4 }, 1],
            ],
          );
          assert.equal(toolCalls(await engine.journal(started.runId), "c.count"), 5);
        } finally {
          await engine.close();
        }
      } finally {
        await t.done();
      }
    });

    it("a start's budget is checked: a wrong field or a tool the toolset lacks is refused, naming it", async () => {
      const t = await setup({ "c.count": () => 1 });
      try {
        const { id } = await t.engine.registerToolset(harnessToolset(["c.count"]));
        await assert.rejects(
          t.engine.start({ toolset: id, source: LOOP, budget: { maxCalls: -1 } }),
          (e: unknown) => EngineError.is(e) && e.code === "invalid_request" && /budget\.maxCalls: -1 is not a whole number/.test(e.message),
        );
        await assert.rejects(
          t.engine.start({ toolset: id, source: LOOP, budget: { maxCallsPerTool: { "c.nope": 1 } } }),
          (e: unknown) => EngineError.is(e) && /maxCallsPerTool\["c\.nope"\] names no tool/.test(e.message),
        );
        await assert.rejects(
          t.engine.registerToolset(harnessToolset(["c.count"], { budget: { maxCallsPerTool: { "c.other": 2 } } })),
          /budget\.maxCallsPerTool\["c\.other"\] names no tool of this toolset/,
        );
      } finally {
        await t.done();
      }
    });

    it("the engine's default budget applies where neither the start nor the toolset gives one", async () => {
      const t = await setup({ "c.count": () => 1 }, { limits: { budget: { maxCalls: 4 } } });
      try {
        const started = await t.start(harnessToolset(["c.count"]), LOOP);
        const error = budgetError(await started.end);
        assert.equal(t.harness.calls.length, 4);
        assert.deepEqual(error.failure?.details, { budget: "maxCalls", limit: 4 });
      } finally {
        await t.done();
      }
    });
  });
}

budgetSuite("SQLite", () => {
  const dir = tempDir("tapedeck-budget-");
  return Promise.resolve({
    open: () => Promise.resolve(SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "normal" })),
    drop: () => Promise.resolve(dir.cleanup()),
  });
});

describeWithPostgres("run budgets on PostgreSQL", (url) => {
  budgetSuite("PostgreSQL", () => {
    const schema = freshSchemaName();
    return Promise.resolve({ open: () => PostgresStore.open(schemaUrl(url, schema)), drop: () => dropSchema(url, schema) });
  });
});
