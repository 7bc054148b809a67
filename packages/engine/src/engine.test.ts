import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JournalEntry } from "@tapedeck/protocol";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

const kinds = (entries: readonly JournalEntry[]) => entries.map((e) => e.kind);

describe("engine: running scripts", () => {
  it("runs sequential calls, journals them with keys {run}/{seq}, and returns the output", async () => {
    const tools = new ToolHarness({ "math.add": (a: { x: number; y: number }) => a.x + a.y });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["math.add"]),
        `import { math } from "tapedeck:tools";
         export default async function (input: { n: number }) {
           let total = 0;
           for (let i = 0; i < input.n; i++) total = (await math.add({ x: total, y: i })) as number;
           console.log("total", total);
           return { total };
         }`,
        { n: 4 },
      );
      assert.deepEqual(end, { status: "completed", output: { total: 6 } });
      assert.deepEqual(
        tools.calls.map((c) => c.key),
        [1, 2, 3, 4].map((seq) => `${runId}/${seq}`),
      );
      const journal = await t.engine.journal(runId);
      assert.deepEqual(kinds(journal), [
        "run.started",
        "call.scheduled",
        "call.completed",
        "call.scheduled",
        "call.completed",
        "call.scheduled",
        "call.completed",
        "call.scheduled",
        "call.completed",
        "log",
        "run.completed",
      ]);
      assert.deepEqual(
        journal.map((e) => e.index),
        journal.map((_, i) => i),
      );
      const run = await t.engine.getRun(runId);
      assert.equal(run.status, "completed");
      assert.deepEqual(run.output, { total: 6 });
    } finally {
      await t.cleanup();
    }
  });

  it("delivers concurrent results in completion order and journals that order", async () => {
    const tools = new ToolHarness({ "kv.get": (a: { k: string }) => a.k.toUpperCase() });
    tools.hold("kv.get");
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["kv.get"]));
      const started = await t.engine.start({
        toolset: id,
        source: `import { kv } from "tapedeck:tools";
          export default async () => {
            const order: string[] = [];
            const all = ["a", "b", "c"].map((k) => kv.get({ k }).then((v) => { order.push(v as string); return v; }));
            const first = await Promise.race(all);
            await Promise.all(all);
            return { first, order };
          }`,
      });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      await tools.heldCount(3);
      tools.release(2); // c
      tools.release(0); // a
      tools.release(0); // b
      const end = await started.end;
      assert.deepEqual(end, { status: "completed", output: { first: "C", order: ["C", "A", "B"] } });
      const outcomes = (await t.engine.journal(started.runId)).filter((e) => e.kind === "call.completed").map((e) => (e.kind === "call.completed" ? e.seq : 0));
      assert.deepEqual(outcomes, [3, 1, 2]);
    } finally {
      await t.cleanup();
    }
  });

  it("gives a ToolError the script can catch, with the tool's code", async () => {
    const tools = new ToolHarness({
      "pay.charge": () => {
        throw Object.assign(new Error("card declined"), {});
      },
    });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { end } = await runScript(
        t.engine,
        harnessToolset(["pay.charge"]),
        `import { pay, ToolError } from "tapedeck:tools";
         export default async () => {
           try { await pay.charge({ cents: 5 }); return "charged"; }
           catch (e) { return e instanceof ToolError ? { name: e.name, code: e.code, message: e.message, seq: e.seq } : "other"; }
         }`,
      );
      assert.deepEqual(end, { status: "completed", output: { name: "ToolError", code: "tool_error", message: "card declined", seq: 1 } });
    } finally {
      await t.cleanup();
    }
  });

  it("fails a run with an uncaught ToolError at the model's own line, with the call and a code frame", async () => {
    const tools = new ToolHarness({ "pay.charge": () => Promise.reject(new Error("card declined")) });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { end } = await runScript(
        t.engine,
        harnessToolset(["pay.charge"]),
        [
          `import { pay } from "tapedeck:tools";`,
          `interface Receipt { id: string }`,
          `type Cents = number;`,
          `export default async () => {`,
          `  const amount: Cents = 5;`,
          `  const receipt = (await pay.charge({ cents: amount })) as Receipt;`,
          `  return receipt.id;`,
          `};`,
        ].join("\n"),
      );
      assert.equal(end.status, "failed");
      if (end.status !== "failed") return;
      assert.equal(end.error.kind, "script");
      assert.equal(end.error.name, "ToolError");
      assert.equal(end.error.failure?.code, "tool_error");
      assert.deepEqual(end.error.call, { seq: 1, tool: "pay.charge" });
      assert.equal(end.error.position?.line, 6);
      assert.match(end.error.frame ?? "", /> +6 \|.*pay\.charge/);
    } finally {
      await t.cleanup();
    }
  });

  it("reports the model's line for its own errors", async () => {
    const t = await testEngine();
    try {
      const { end } = await runScript(
        t.engine,
        {},
        [`type A = { x: number };`, ``, `export default () => {`, `  const a = JSON.parse("{}") as A;`, `  return (a as any).missing.deep;`, `};`].join("\n"),
      );
      assert.equal(end.status, "failed");
      if (end.status !== "failed") return;
      assert.equal(end.error.name, "TypeError");
      assert.equal(end.error.position?.line, 5);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses arguments that do not match the schema, before recording or sending the call", async () => {
    const tools = new ToolHarness({ "shop.get": () => "never" });
    const t = await testEngine({ hostTools: tools.module() });
    const spec = {
      hostTools: {
        shop: {
          get: {
            description: "Get an item.",
            inputSchema: { type: "object", properties: { sku: { type: "string" }, state: { enum: ["a", "b"] } }, required: ["sku"] },
          },
        },
      },
    };
    try {
      const { runId, end } = await runScript(
        t.engine,
        spec,
        `import { shop, ToolError } from "tapedeck:tools";
         export default async () => {
           try { await shop.get(JSON.parse('{"sku": 5, "state": "c"}')); } catch (e) { return (e as ToolError).code + ": " + (e as ToolError).message; }
         }`,
      );
      assert.equal(end.status, "completed");
      if (end.status !== "completed") return;
      assert.match(end.output as string, /^invalid_arguments: Invalid arguments for shop\.get: \/sku must be string/);
      assert.match(end.output as string, /\/state must be equal to one of the allowed values \("a", "b"\)/);
      assert.equal(tools.calls.length, 0);
      assert.deepEqual(kinds(await t.engine.journal(runId)), ["run.started", "call.rejected", "run.completed"]);
    } finally {
      await t.cleanup();
    }
  });

  it("keeps per-tool concurrency and the run's limit of 16 calls in flight", async () => {
    const tools = new ToolHarness({ "a.slow": () => 1, "b.fast": () => 2 });
    tools.hold("a.slow");
    tools.hold("b.fast");
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["a.slow", "b.fast"], { policies: { "a.slow": { concurrency: 2 } } }));
      const started = await t.engine.start({
        toolset: id,
        source: `import { a, b } from "tapedeck:tools";
          export default async () => (await Promise.all([
            ...Array.from({ length: 10 }, () => a.slow()),
            ...Array.from({ length: 30 }, () => b.fast()),
          ])).length`,
      });
      if (started.kind !== "started") throw new Error("refused");
      await tools.heldCount(16);
      assert.equal(tools.heldCalls().filter((c) => c.tool === "a.slow").length, 2);
      assert.equal(tools.heldCalls().length, 16);
      while (tools.heldCalls().length > 0) {
        tools.release(0);
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Past 16 in flight nothing else was sent; all 40 calls are eventually made.
      assert.ok(tools.maxActive <= 16);
      assert.deepEqual(await started.end, { status: "completed", output: 40 });
      assert.equal(tools.calls.length, 40);
    } finally {
      await t.cleanup();
    }
  });

  it("fails a call that takes longer than its timeout with a ToolError the script can catch", async () => {
    const tools = new ToolHarness({ "x.hang": () => new Promise(() => {}) });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { end } = await runScript(
        t.engine,
        harnessToolset(["x.hang"], { policies: { "x.hang": { timeout: "30ms" } } }),
        `import { x, ToolError } from "tapedeck:tools";
         export default async () => { try { await x.hang(); } catch (e) { return (e as ToolError).code; } }`,
      );
      assert.deepEqual(end, { status: "completed", output: "timeout" });
    } finally {
      await t.cleanup();
    }
  });

  it("fails a script that awaits a promise nothing can settle", async () => {
    const t = await testEngine();
    try {
      const { end } = await runScript(t.engine, {}, `export default async () => { await new Promise(() => {}); return 1; }`);
      assert.equal(end.status, "failed");
      if (end.status === "failed") assert.equal(end.error.kind, "deadlock");
    } finally {
      await t.cleanup();
    }
  });

  it("ignores the late results of calls the script no longer waits for", async () => {
    const tools = new ToolHarness({ "x.fast": () => "fast", "x.slow": () => "slow" });
    tools.hold("x.slow");
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["x.fast", "x.slow"]),
        `import { x } from "tapedeck:tools";
         export default async () => Promise.race([x.slow(), x.fast()])`,
      );
      assert.deepEqual(end, { status: "completed", output: "fast" });
      const length = (await t.engine.journal(runId)).length;
      tools.release(0);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal((await t.engine.journal(runId)).length, length);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses a script that does not type-check, creating no run", async () => {
    const t = await testEngine({ hostTools: new ToolHarness({ "a.b": () => 1 }).module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["a.b"]));
      const started = await t.engine.start({ toolset: id, source: `import { a } from "tapedeck:tools";\nexport default a.nope();` });
      assert.equal(started.kind, "refused");
      if (started.kind === "refused") assert.equal(started.diagnostics[0]?.line, 2);
      assert.equal((await t.engine.listRuns()).length, 0);
    } finally {
      await t.cleanup();
    }
  });

  it("a run started in a trace (traceparent) makes its calls in that trace, on every attempt and after a fork; a malformed one is refused", async () => {
    const seen: string[] = [];
    const t = await testEngine({ hostTools: { x: { f: (_args: unknown, ctx: { traceparent: string }) => (seen.push(ctx.traceparent), 1) } } });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["x.f"]));
      const trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const source = `import { x } from "tapedeck:tools";\nexport default async () => { await x.f(); await x.f(); return 1; };`;
      const started = await t.engine.start({ toolset: id, source, traceparent: trace });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      assert.equal((await started.end).status, "completed");
      assert.equal(seen.length, 2);
      for (const traceparent of seen) assert.match(traceparent, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
      assert.notEqual(seen[0], seen[1], "each call its own span");
      const forked = await t.engine.fork({
        parent: started.runId,
        source: source.replace("return 1", "await x.f(); return 2"),
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      });
      assert.equal(forked.kind === "started" ? (await forked.end).status : forked.kind, "completed");
      assert.match(seen.at(-1) ?? "", /^00-0af7651916cd43dd8448eb211c80319c-/);
      const plain = await t.engine.start({ toolset: id, source });
      if (plain.kind === "started") await plain.end;
      assert.doesNotMatch(seen.at(-1) ?? "", /4bf92f3577b34da6a3ce929d0e0e4736|0af7651916cd43dd8448eb211c80319c/, "a run given none has a trace of its own");
      await assert.rejects(
        t.engine.start({ toolset: id, source, traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" }),
        /traceparent must be a W3C trace context/,
      );
    } finally {
      await t.cleanup();
    }
  });
});
