import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

const CALLS = `import { shop } from "tapedeck:tools";
export default async () => {
  const items = (await shop.list({ category: "books" })) as { sku: string }[];
  const prices = (await Promise.all(items.map((item) => shop.price({ sku: item.sku })))) as { cents: number }[];
  const total = prices.reduce((sum, p) => sum + p.cents, 0);`;

/** A bug the type-checker cannot see: the run fails at run time, after its calls. */
const PARENT = `${CALLS}\n  return items[5]!.sku + total;\n};`;
const FIXED = `${CALLS}\n  return shop.buy({ total });\n};`;

describe("forks (retry_run)", () => {
  it("a fork with corrected code reuses the parent's completed calls instead of sending them; the parent is unchanged", async () => {
    const tools = new ToolHarness({
      "shop.list": () => [{ sku: "a" }, { sku: "b" }],
      "shop.price": (a: { sku: string }) => ({ cents: a.sku === "a" ? 100 : 250 }),
      "shop.buy": (a: { total: number }) => ({ ok: a.total }),
    });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const spec = harnessToolset(["shop.list", "shop.price", "shop.buy"]);
      const parent = await runScript(t.engine, spec, PARENT);
      assert.equal(parent.end.status, "failed", "the parent's script has a bug");
      const parentJournal = await t.engine.journal(parent.runId);
      assert.equal(tools.calls.length, 3);

      const started = await t.engine.fork({ parent: parent.runId, source: FIXED });
      assert.equal(started.kind, "started", started.kind === "refused" ? started.diagnostics.map((d) => d.message).join("\n") : "");
      if (started.kind !== "started") return;
      assert.deepEqual(await started.end, { status: "completed", output: { ok: 350 } });
      assert.deepEqual(
        tools.calls.slice(3).map((c) => c.tool),
        ["shop.buy"],
        "only the new call was sent",
      );

      const journal = await t.engine.journal(started.runId);
      const reused = journal.flatMap((e) => (e.kind === "call.completed" && e.reusedFrom ? [e.reusedFrom] : []));
      assert.deepEqual(
        reused.map((r) => r.run),
        [parent.runId, parent.runId, parent.runId],
      );
      assert.deepEqual(reused.map((r) => r.seq).sort(), [1, 2, 3]);
      assert.equal((await t.engine.getRun(started.runId)).parentId, parent.runId);
      assert.deepEqual(await t.engine.journal(parent.runId), parentJournal, "the parent is unchanged");
      assert.ok((await t.engine.verify(started.runId)).ok, "a fork's journal replays like any other");
    } finally {
      await t.cleanup();
    }
  });

  it("calls with other arguments are sent; each recorded call is reused at most once", async () => {
    const tools = new ToolHarness({ "kv.get": (a: { k: string }) => a.k.toUpperCase() });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const spec = harnessToolset(["kv.get"]);
      const parent = await runScript(
        t.engine,
        spec,
        `import { kv } from "tapedeck:tools";\nexport default async () => [await kv.get({ k: "a" }), await kv.get({ k: "b" })];`,
      );
      assert.equal(parent.end.status, "completed");
      const started = await t.engine.fork({
        parent: parent.runId,
        source: `import { kv } from "tapedeck:tools";\nexport default async () => [await kv.get({ k: "a" }), await kv.get({ k: "a" }), await kv.get({ k: "c" })];`,
      });
      if (started.kind !== "started") throw new Error("refused");
      assert.deepEqual(await started.end, { status: "completed", output: ["A", "A", "C"] });
      assert.deepEqual(
        tools.calls.slice(2).map((c) => c.args),
        [{ k: "a" }, { k: "c" }],
        "the second a and the c were sent",
      );
    } finally {
      await t.cleanup();
    }
  });
});
