/**
 * Workflows end to end, through the engine's public entry: saving one (type-checked against its
 * base toolset and its input/output contract) derives a toolset; scripts on it start child runs
 * with `workflows.<name>.start`, wait for them with `result()`, and signal them; parked parents
 * wake when their child ends; replay, crash-resume and forks start no second child.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { JournalEntry, JsonValue } from "@tapedeck/protocol";
import { Engine, type EngineOptions, type SaveWorkflowOptions } from "./engine.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { InProcessHostTools } from "./sources/in-process-host-tools.js";
import type { Store } from "./store/store.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { tempDir, testEngine, testSandboxes } from "./test-support/engines.js";
import { ManualClock } from "./test-support/manual-clock.js";

after(() => testSandboxes().close());

const DAY = 86_400_000;

/** A workflow that doubles a number with the `w.step` tool, and says who it ran as. */
const DOUBLE: Omit<SaveWorkflowOptions, "toolset"> = {
  name: "double",
  description: "Doubles a number with w.step.",
  source: `import { w } from "tapedeck:tools";
export default async (input: { n: number }): Promise<{ doubled: number }> => {
  const step = await w.step({ n: input.n * 2 });
  return { doubled: step.n };
};`,
  input: { type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false },
  output: { type: "object", properties: { doubled: { type: "number" } }, required: ["doubled"] },
};

async function setup(options: EngineOptions = {}, tools: Record<string, (args: never) => unknown> = {}) {
  const harness = new ToolHarness({ "w.step": (args: { n?: number }) => ({ n: args.n ?? 0 }), ...tools });
  const t = await testEngine({ hostTools: harness.module(), ...options });
  const spec = harnessToolset(Object.keys(tools));
  const step = {
    description: "Echoes n.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  };
  const base = await t.engine.registerToolset({ ...spec, hostTools: { ...spec.hostTools, w: { ...spec.hostTools?.w, step } } });
  const save = async (workflow: Omit<SaveWorkflowOptions, "toolset">, toolset = base.id) => {
    const saved = await t.engine.saveWorkflow({ toolset, ...workflow });
    if (saved.kind === "refused") throw new Error(`refused:\n${saved.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n")}`);
    return saved;
  };
  const start = async (toolset: string, source: string, input?: JsonValue) => {
    const started = await t.engine.start({ toolset, source, ...(input === undefined ? {} : { input }) });
    if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n"));
    return started;
  };
  return { ...t, harness, base, save, start };
}

const primitiveCalls = (journal: readonly JournalEntry[]) =>
  journal.flatMap((e) => (e.kind === "call.scheduled" && e.tool.startsWith("tapedeck.workflow.") ? [[e.seq, e.tool, e.args] as const] : []));

describe("workflows: start and result", () => {
  it("a parent starts a workflow as a child run and awaits its output; the journal holds ordinary primitive calls", async () => {
    const t = await setup();
    try {
      const saved = await t.save(DOUBLE);
      const started = await t.start(
        saved.id,
        `export default async () => { const run = await workflows.double.start({ n: 21 }); return { id: run.id, out: await run.result() }; };`,
      );
      const end = await started.end;
      assert.equal(end.status, "completed");
      const output = end.output as { id: string; out: JsonValue };
      assert.deepEqual(output.out, { doubled: 42 });
      const child = await t.engine.getRun(output.id);
      assert.deepEqual([child.status, child.caller, child.toolsetId, child.output], ["completed", { runId: started.runId, seq: 1 }, saved.id, { doubled: 42 }]);
      const journal = await t.engine.journal(started.runId);
      assert.deepEqual(primitiveCalls(journal), [
        [1, "tapedeck.workflow.start", { input: { n: 21 }, name: "double" }],
        [2, "tapedeck.workflow.result", { id: output.id, name: "double" }],
      ]);
      assert.deepEqual(
        journal.filter((e) => e.kind === "call.completed").map((e) => (e.kind === "call.completed" ? e.result : null)),
        [{ id: output.id }, { doubled: 42 }],
      );
      assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end });
      assert.deepEqual(
        t.harness.calls.map((c) => [c.tool, c.args, c.key]),
        [["w.step", { n: 42 }, `${output.id}/1`]],
      );
    } finally {
      await t.cleanup();
    }
  });
});

/** A workflow that waits for the signal "approve" and answers with its payload. */
const APPROVAL: Omit<SaveWorkflowOptions, "toolset"> = {
  name: "approval",
  description: "Waits for a decision.",
  source: `export default async (input: { item: string }): Promise<{ item: string; ok: boolean }> => {
  const decision = await signal<{ ok: boolean }>("approve");
  return { item: input.item, ok: decision.ok };
};`,
  input: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
  output: { type: "object", properties: { item: { type: "string" }, ok: { type: "boolean" } }, required: ["item", "ok"] },
  signals: { approve: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } },
};

/** A workflow that sleeps ten days, then doubles with w.step. */
const NAP: Omit<SaveWorkflowOptions, "toolset"> = {
  name: "nap",
  description: "Sleeps ten days, then answers.",
  source: `import { w } from "tapedeck:tools";
export default async (input: { n: number }) => {
  await sleep("10d");
  return { doubled: (await w.step({ n: input.n * 2 })).n };
};`,
  input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  output: { type: "object", properties: { doubled: { type: "number" } }, required: ["doubled"] },
};

const AWAIT_NAP = `export default async () => { const run = await workflows.nap.start({ n: 4 }); return await run.result(); };`;

async function childrenOf(engine: Engine, runId: string) {
  return (await engine.listRuns({ limit: 1000 })).filter((run) => run.caller?.runId === runId);
}

describe("workflows: signals", () => {
  it("a parent signals its child through workflows.<name>.signal; the child waits for it and answers; the signal is a journaled call, sent once", async () => {
    const t = await setup();
    try {
      const saved = await t.save(APPROVAL);
      const started = await t.start(
        saved.id,
        `export default async () => {
  const run = await workflows.approval.start({ item: "laptop" });
  await workflows.approval.signal(run.id, "approve", { ok: true });
  return await run.result();
};`,
      );
      assert.deepEqual(await started.end, { status: "completed", output: { item: "laptop", ok: true } });
      const journal = await t.engine.journal(started.runId);
      const [child] = await childrenOf(t.engine, started.runId);
      assert.ok(child);
      assert.deepEqual(
        primitiveCalls(journal).map(([seq, tool]) => [seq, tool]),
        [
          [1, "tapedeck.workflow.start"],
          [2, "tapedeck.workflow.signal"],
          [3, "tapedeck.workflow.result"],
        ],
      );
      assert.deepEqual(primitiveCalls(journal)[1]![2], { id: child.id, name: "approval", payload: { ok: true }, signal: "approve" });
      const taken = (await t.engine.journal(child.id)).filter((e) => e.kind === "call.completed");
      assert.deepEqual(
        taken.map((e) => (e.kind === "call.completed" ? e.result : null)),
        [{ ok: true }],
        "the child took the one signal",
      );
      assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end: await started.end });
    } finally {
      await t.cleanup();
    }
  });

  it("a signal the workflow does not declare, a payload off its schema, or an input off its schema is rejected before anything is sent", async () => {
    const t = await setup();
    try {
      const saved = await t.save(APPROVAL);
      const started = await t.start(
        saved.id,
        `import { ToolError } from "tapedeck:tools";
const code = async (p: Promise<unknown>) => { try { await p; return "ok"; } catch (e) { return e instanceof ToolError ? e.code + ": " + e.message : String(e); } };
export default async () => {
  const badInput = await code(workflows.approval.start({ item: 7 } as unknown as { item: string }));
  const run = await workflows.approval.start({ item: "x" });
  const badName = await code((workflows.approval.signal as (id: string, name: string, payload: unknown) => Promise<void>)(run.id, "nope", {}));
  const badPayload = await code(workflows.approval.signal(run.id, "approve", { ok: "yes" } as unknown as { ok: boolean }));
  await workflows.approval.signal(run.id, "approve", { ok: false });
  return { badInput, badName, badPayload, result: await run.result() };
};`,
      );
      const end = await started.end;
      assert.equal(end.status, "completed");
      const output = end.output as Record<string, string>;
      assert.match(output.badInput!, /^invalid_arguments: workflows\.approval\.start: the input does not match its schema: \/item must be string/);
      assert.match(output.badName!, /^invalid_arguments: workflows\.approval takes no signal "nope"; it declares "approve"/);
      assert.match(
        output.badPayload!,
        /^invalid_arguments: workflows\.approval\.signal: the payload of "approve" does not match its schema: \/ok must be boolean/,
      );
      assert.deepEqual(output.result, { item: "x", ok: false });
      assert.equal((await childrenOf(t.engine, started.runId)).length, 1, "the rejected start created no run");
      const kinds = (await t.engine.journal(started.runId)).filter((e) => e.kind === "call.rejected").map((e) => (e.kind === "call.rejected" ? e.tool : ""));
      assert.deepEqual(kinds, ["tapedeck.workflow.start", "tapedeck.workflow.signal", "tapedeck.workflow.signal"]);
    } finally {
      await t.cleanup();
    }
  });
});

describe("workflows: waiting for a child", () => {
  it("a parent parks while its child sleeps (holding nothing, waiting for the child), and wakes when the child ends", async () => {
    const clock = new ManualClock();
    const t = await setup({ clock });
    try {
      const saved = await t.save(NAP);
      const started = await t.start(saved.id, AWAIT_NAP);
      const pause = await t.engine.settled(started.runId);
      const [child] = await childrenOf(t.engine, started.runId);
      assert.ok(child);
      assert.deepEqual(pause, { status: "waiting", waits: [{ kind: "child", seq: 2, runId: child.id, workflow: "nap" }] });
      assert.equal((await t.engine.getRun(started.runId)).wakeAt, undefined, "no timer: the child's end wakes it");
      const childPause = await t.engine.settled(child.id);
      assert.equal(childPause?.status, "waiting");
      assert.deepEqual(t.engine.executing(), [], "both parked");
      clock.tick(10 * DAY);
      assert.deepEqual(await started.end, { status: "completed", output: { doubled: 8 } });
      assert.equal((await t.engine.getRun(child.id)).status, "completed");
      assert.equal((await childrenOf(t.engine, started.runId)).length, 1, "waking replayed the start from the journal: no second child");
      assert.ok((await t.engine.verify(started.runId)).ok);
    } finally {
      await t.cleanup();
    }
  });

  it("a parent parked in the store wakes when its child ends in another engine", async () => {
    const clock = new ManualClock();
    const t = await setup({ clock });
    const saved = await t.save(NAP);
    const started = await t.start(saved.id, AWAIT_NAP);
    await t.engine.settled(started.runId);
    const [child] = await childrenOf(t.engine, started.runId);
    assert.ok(child);
    await t.engine.settled(child.id);
    await t.engine.close();
    // A new process: nothing of the parent in memory; its timer is the child's.
    const harness = new ToolHarness({ "w.step": (args: { n?: number }) => ({ n: args.n ?? 0 }) });
    const engine = await t.reopen({ clock, hostTools: harness.module() });
    try {
      const parentEnd = engine.end(started.runId);
      await clock.timers(1);
      clock.tick(10 * DAY);
      assert.deepEqual(await parentEnd, { status: "completed", output: { doubled: 8 } });
      assert.deepEqual(
        harness.calls.map((c) => c.key),
        [`${child.id}/2`],
      );
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });
});

describe("workflows: failures", () => {
  it("a child that fails reaches the parent as a ToolError workflow_failed it can catch, with the child's error", async () => {
    const t = await setup();
    try {
      const saved = await t.save({
        ...DOUBLE,
        name: "broken",
        source: `export default async (input: { n: number }): Promise<{ doubled: number }> => { if (input.n > 1) throw new Error("too big: " + input.n); return { doubled: 0 }; };`,
      });
      const started = await t.start(
        saved.id,
        `import { ToolError } from "tapedeck:tools";
export default async () => {
  const run = await workflows.broken.start({ n: 5 });
  try { return await run.result(); } catch (e) {
    if (e instanceof ToolError) return { code: e.code, message: e.message, details: e.details };
    throw e;
  }
};`,
      );
      const end = await started.end;
      const [child] = await childrenOf(t.engine, started.runId);
      assert.ok(child);
      assert.equal(child.status, "failed");
      assert.deepEqual(end, {
        status: "completed",
        output: {
          code: "workflow_failed",
          message: `The workflow broken (run ${child.id}) failed: too big: 5`,
          details: { runId: child.id, status: "failed", error: { kind: "script", message: "too big: 5" } },
        },
      });
    } finally {
      await t.cleanup();
    }
  });

  it("an uncaught child failure fails the parent with the call that failed; a cancelled child fails result() too", async () => {
    const t = await setup();
    try {
      const saved = await t.save(APPROVAL);
      const started = await t.start(saved.id, `export default async () => (await workflows.approval.start({ item: "x" })).result();`);
      await t.engine.settled(started.runId);
      const [child] = await childrenOf(t.engine, started.runId);
      assert.ok(child);
      await t.engine.cancel(child.id, "not needed");
      const end = await started.end;
      assert.equal(end.status, "failed");
      if (end.status !== "failed") return;
      assert.equal(end.error.failure?.code, "workflow_failed");
      assert.equal(end.error.message, `The workflow approval (run ${child.id}) was cancelled: not needed`);
      assert.deepEqual(end.error.call, { seq: 2, tool: "tapedeck.workflow.result" });
    } finally {
      await t.cleanup();
    }
  });

  it("a workflow that starts itself without end stops at the depth limit", async () => {
    const t = await setup();
    try {
      const first = await t.save({ ...DOUBLE, name: "deep", source: `export default async (input: { n: number }) => ({ doubled: input.n });` });
      // Checked against `first`, which has `deep`: the derived toolset's `deep` starts itself.
      const saved = await t.save(
        { ...DOUBLE, name: "deep", source: `export default async (input: { n: number }) => (await workflows.deep.start({ n: input.n + 1 })).result();` },
        first.id,
      );
      const started = await t.start(saved.id, `export default async () => (await workflows.deep.start({ n: 0 })).result();`);
      const end = await started.end;
      assert.equal(end.status, "failed");
      if (end.status !== "failed") return;
      assert.equal(end.error.failure?.code, "workflow_failed");
      const runs = await t.engine.listRuns({ limit: 100 });
      assert.equal(runs.length, 9, "the run and 8 levels of children");
      const deepest = runs.find((run) => run.status === "failed" && run.error?.failure?.code === "workflow_too_deep");
      assert.ok(deepest, "the deepest child could not start another");
      assert.match(deepest.error!.message, /8 levels deep; workflows may nest 8 deep at most/);
    } finally {
      await t.cleanup();
    }
  });
});

/** `store`, except that its appends for which `fail` is true reject: the engine dies before that commit. */
function failingAppends(store: Store, fail: (runId: string, entries: readonly JournalEntry[]) => boolean): Store {
  return new Proxy(store, {
    get(target, property) {
      if (property === "append") {
        return (runId: string, entries: readonly JournalEntry[], patch?: Parameters<Store["append"]>[2]) =>
          fail(runId, entries) ? Promise.reject(new Error("the disk went away")) : target.append(runId, entries, patch);
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("workflows: crash-resume, replay and forks start no second child", () => {
  it("a start call interrupted after the child was created (its outcome never journaled) finds that child when the parent resumes", async () => {
    const dir = tempDir();
    const path = join(dir.path, "tapedeck.db");
    const sandboxes = { create: (o: Parameters<ReturnType<typeof testSandboxes>["create"]>[0]) => testSandboxes().create(o), close: () => Promise.resolve() };
    const tools = () => new ToolHarness({ "w.step": (args: { n?: number }) => ({ n: args.n ?? 0 }) }).module();
    let parentId = "";
    // The parent's commit that would journal the start's outcome fails: the engine "dies" there.
    const store = failingAppends(
      SqliteStore.open({ path, durability: "normal" }),
      (runId, entries) => runId === parentId && entries.some((e) => e.kind === "call.completed"),
    );
    const first = await Engine.open({ store, sandboxes, sources: { host: new InProcessHostTools(tools()) } });
    const step = {
      description: "Echoes n.",
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    };
    const base = await first.registerToolset({ hostTools: { w: { step } } });
    const saved = await first.saveWorkflow({ toolset: base.id, ...DOUBLE });
    assert.equal(saved.kind, "saved");
    if (saved.kind !== "saved") return;
    const started = await first.start({ toolset: saved.id, source: `export default async () => (await workflows.double.start({ n: 5 })).result();` });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    parentId = started.runId;
    await assert.rejects(started.end, /the disk went away/);
    const [child] = await childrenOf(first, parentId);
    assert.ok(child, "the child was created before the parent's commit failed");
    await first.close();

    const second = await Engine.open({
      store: SqliteStore.open({ path, durability: "normal" }),
      sandboxes,
      sources: { host: new InProcessHostTools(tools()) },
    });
    try {
      const journal = await second.journal(parentId);
      assert.deepEqual(
        journal.map((e) => e.kind),
        ["run.started", "call.scheduled"],
        "the start call is open",
      );
      const resumed = await second.resume(parentId);
      assert.deepEqual(await resumed[0]!.end, { status: "completed", output: { doubled: 10 } });
      const children = await childrenOf(second, parentId);
      assert.deepEqual(
        children.map((c) => c.id),
        [child.id],
        "the same child, not a second one",
      );
      assert.equal((await second.listRuns({ limit: 100 })).length, 2);
      assert.deepEqual(
        (await second.journal(parentId)).find((e) => e.kind === "call.completed"),
        { ...(await second.journal(parentId)).find((e) => e.kind === "call.completed")!, seq: 1, result: { id: child.id } },
      );
      assert.ok((await second.verify(parentId)).ok);
    } finally {
      await second.close();
      dir.cleanup();
    }
  });

  it("a signal call interrupted after it was sent (its outcome never journaled) is not sent twice, nor failed, when the parent resumes", async () => {
    const dir = tempDir();
    const path = join(dir.path, "tapedeck.db");
    const sandboxes = { create: (o: Parameters<ReturnType<typeof testSandboxes>["create"]>[0]) => testSandboxes().create(o), close: () => Promise.resolve() };
    let parentId = "";
    const signalled = (entries: readonly JournalEntry[]) => entries.some((e) => e.kind === "call.completed" && e.seq === 2);
    const first = await Engine.open({
      store: failingAppends(SqliteStore.open({ path, durability: "normal" }), (runId, entries) => runId === parentId && signalled(entries)),
      sandboxes,
    });
    const base = await first.registerToolset({});
    const saved = await first.saveWorkflow({ toolset: base.id, ...APPROVAL });
    assert.equal(saved.kind, "saved");
    if (saved.kind !== "saved") return;
    const source = `export default async () => {
  const run = await workflows.approval.start({ item: "x" });
  await workflows.approval.signal(run.id, "approve", { ok: true });
  return run.result();
};`;
    const started = await first.start({ toolset: saved.id, source });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    parentId = started.runId;
    await assert.rejects(started.end, /the disk went away/);
    const [sent] = await childrenOf(first, parentId);
    assert.ok(sent);
    // The hard case: the child took the signal and ended before the parent resumes its call.
    assert.deepEqual(await first.end(sent.id), { status: "completed", output: { item: "x", ok: true } });
    await first.close();

    const store = SqliteStore.open({ path, durability: "normal" });
    const second = await Engine.open({ store, sandboxes });
    try {
      const [resumed] = await second.resume(parentId);
      assert.deepEqual(await resumed!.end, { status: "completed", output: { item: "x", ok: true } });
      const [child] = await childrenOf(second, parentId);
      assert.ok(child);
      assert.deepEqual(await store.pendingSignals(child.id, "approve"), [], "one signal was kept, and the child took it");
      assert.ok((await second.verify(parentId)).ok);
    } finally {
      await second.close();
      dir.cleanup();
    }
  });

  it("a fork reuses a start whose output its parent received (no new child); a child its parent never saw complete is started again", async () => {
    const t = await setup();
    try {
      const saved = await t.save(DOUBLE);
      const parent = await t.start(
        saved.id,
        `export default async () => { const out = await (await workflows.double.start({ n: 1 })).result(); throw new Error("bug after " + out.doubled); };`,
      );
      assert.equal((await parent.end).status, "failed");
      const fixed = `export default async () => { const out = await (await workflows.double.start({ n: 1 })).result(); return out.doubled + 1; };`;
      const fork = await t.engine.fork({ parent: parent.runId, source: fixed });
      assert.equal(fork.kind, "started");
      if (fork.kind !== "started") return;
      assert.deepEqual(await fork.end, { status: "completed", output: 3 });
      assert.equal((await childrenOf(t.engine, fork.runId)).length, 0, "the fork started no child");
      const reused = (await t.engine.journal(fork.runId)).flatMap((e) => (e.kind === "call.completed" && e.reusedFrom ? [e.reusedFrom.seq] : []));
      assert.deepEqual(reused, [1, 2], "start and result() were both taken from the parent");
      assert.equal(t.harness.calls.length, 1, "the child's tool call was made once");

      // A parent that failed before awaiting its child: the fork starts its own.
      const early = await t.start(saved.id, `export default async () => { await workflows.double.start({ n: 2 }); throw new Error("before result"); };`);
      assert.equal((await early.end).status, "failed");
      const fork2 = await t.engine.fork({ parent: early.runId, source: `export default async () => (await workflows.double.start({ n: 2 })).result();` });
      assert.equal(fork2.kind, "started");
      if (fork2.kind !== "started") return;
      assert.deepEqual(await fork2.end, { status: "completed", output: { doubled: 4 } });
      assert.equal((await childrenOf(t.engine, fork2.runId)).length, 1, "the fork's own child");
      assert.ok((await t.engine.verify(fork2.runId)).ok);
    } finally {
      await t.cleanup();
    }
  });
});

describe("workflows: saving", () => {
  it("code that does not type-check, or breaks its input/output contract, is refused with diagnostics at the place to fix", async () => {
    const t = await setup();
    try {
      const refused = async (source: string, more: Partial<SaveWorkflowOptions> = {}) => {
        const saved = await t.engine.saveWorkflow({ toolset: t.base.id, ...DOUBLE, source, ...more });
        assert.equal(saved.kind, "refused", source);
        return saved.kind === "refused" ? saved.diagnostics : [];
      };
      const [body] = await refused(`export default async (input: { n: number }) => {\n  const s: string = input.n;\n  return { doubled: 1 };\n};`);
      assert.deepEqual([body?.line, body?.message], [2, "Type 'number' is not assignable to type 'string'."]);
      const [output] = await refused(`import { w } from "tapedeck:tools";\n\nexport default async (input: { n: number }) => ({ doubled: String(input.n) });`);
      assert.deepEqual([output?.line, output?.column, output?.code], [3, 1, "workflow-contract"]);
      assert.equal(
        output!.message,
        "The workflow's default export must return its output: export default async (input: Input): Promise<Output> => …, with Input = { n: number } (from the input schema), Output = { doubled: number } (from the output schema). " +
          "Type '{ doubled: string; }' is not assignable to type 'Output'. Types of property 'doubled' are incompatible. Type 'string' is not assignable to type 'number'.",
      );
      const [input] = await refused(`export default async (input: { n: string }) => ({ doubled: 1 });`);
      assert.match(input!.message, /^The workflow's default export must take its input: .*Type 'Input' is not assignable to type '\{ n: string; \}'/);
      const ignores = await t.engine.saveWorkflow({ toolset: t.base.id, ...DOUBLE, source: `export default async () => ({ doubled: 0 });` });
      assert.equal(ignores.kind, "saved", "a workflow may ignore its input");
      const [none] = await refused(`export const x = 1;`);
      assert.match(none!.message, /^A workflow must default-export a function of its input: .* The script has no default export\.$/);
      const [tool] = await refused(`import { nope } from "tapedeck:tools";\nexport default async (input: { n: number }) => ({ doubled: input.n });`);
      assert.match(tool!.message, /has no exported member 'nope'/);
      await assert.rejects(t.engine.saveWorkflow({ toolset: t.base.id, ...DOUBLE, name: "not a name" }), {
        code: "invalid_request",
        message: /must be an identifier/,
      });
      await assert.rejects(t.engine.saveWorkflow({ toolset: t.base.id, ...DOUBLE, output: { type: "nonsense" } }), {
        code: "invalid_toolset",
        message: /output cannot be compiled as a JSON Schema/,
      });
    } finally {
      await t.cleanup();
    }
  });

  it("saving derives a toolset whose declarations and prompt have the workflow; saving a name again replaces it; derived toolsets keep their base's workflows", async () => {
    const t = await setup();
    try {
      assert.doesNotMatch(t.base.declarations.typescript, /workflows/);
      const first = await t.save(APPROVAL);
      assert.equal(first.toolset.base, t.base.id);
      assert.deepEqual(first.toolset.tools, (await t.engine.toolset(t.base.id)).toolset.tools);
      assert.equal((await t.save(APPROVAL)).id, first.id, "content-addressed: the same workflow saved again is the same toolset");
      const ts = first.declarations.typescript;
      assert.match(ts, /declare const workflows: \{\n  \/\*\* Waits for a decision\. \*\/\n  readonly approval: \{/);
      assert.ok(ts.includes("    start(input: { item: string }): Promise<{ readonly id: string; result(): Promise<{ item: string; ok: boolean }> }>;\n"), ts);
      assert.ok(ts.includes('    signal(id: string, name: "approve", payload: { ok: boolean }): Promise<void>;\n'));
      const prompt = first.declarations.prompt.split("\n");
      assert.ok(
        prompt.includes("workflows.approval.start({ item: string }) → { id, result() → { item: string, ok: boolean } } · Waits for a decision."),
        prompt.join("\n"),
      );
      assert.ok(prompt.includes('workflows.approval.signal(id, "approve", { ok: boolean }) · Sends it to a run of approval this run started.'));

      const both = await t.save(DOUBLE, first.id);
      assert.deepEqual(Object.keys(both.toolset.workflows ?? {}), ["approval", "double"]);
      const replaced = await t.save({ ...APPROVAL, description: "Waits for a yes or a no." }, both.id);
      assert.deepEqual(Object.keys(replaced.toolset.workflows ?? {}), ["approval", "double"]);
      assert.equal(replaced.toolset.workflows?.approval?.description, "Waits for a yes or a no.");
      assert.notEqual(replaced.id, both.id);
      assert.equal((await t.engine.toolset(both.id)).toolset.workflows?.approval?.description, "Waits for a decision.", "the base is unchanged");

      const more = await t.engine.registerToolset({ base: replaced.id, ...harnessToolset(["extra.tool"]) });
      assert.deepEqual(Object.keys(more.toolset.workflows ?? {}), ["approval", "double"], "registering a derived toolset keeps the base's workflows");
      assert.match(more.declarations.typescript, /readonly double: \{/);
    } finally {
      await t.cleanup();
    }
  });

  it("a script that uses workflows on a toolset without any does not type-check, and says what to do", async () => {
    const t = await setup();
    try {
      const checked = await t.engine.check(`export default async () => (await workflows.double.start({ n: 1 })).result();`, t.base.id);
      assert.equal(checked.ok, false);
      assert.equal(
        checked.diagnostics[0]?.message,
        "Cannot find name 'workflows': this toolset pins no workflows. Save one first (save_workflow, or POST /v1/toolsets/<id>/workflows), then run the script on the toolset that saving it gives (a new id).",
      );
      const saved = await t.save(DOUBLE);
      assert.equal((await t.engine.check(`export default async () => (await workflows.double.start({ n: 1 })).result();`, saved.id)).ok, true);
      const wrong = await t.engine.check(`export default async () => workflows.double.start({ m: 1 });`, saved.id);
      assert.equal(wrong.ok, false, "the input is typed from the schema");
      const unknown = await t.engine.check(`export default async () => workflows.triple.start({ n: 1 });`, saved.id);
      assert.match(unknown.diagnostics[0]!.message, /Property 'triple' does not exist/);
    } finally {
      await t.cleanup();
    }
  });
});

describe("workflows: test_script", () => {
  it("a test runs the workflow's child in virtual time with the scenario's mocks: ten days of the child's sleep cost nothing", async () => {
    const t = await setup();
    try {
      const saved = await t.save(NAP);
      const tested = await t.engine.test({ toolset: saved.id, source: AWAIT_NAP, scenario: { tools: { "w.step": { result: { n: 99 } } } } });
      assert.equal(tested.kind, "tested");
      if (tested.kind !== "tested") return;
      assert.deepEqual([tested.status, tested.output, tested.virtualMs], ["completed", { doubled: 99 }, 10 * DAY]);
      assert.deepEqual(
        tested.calls.map((c) => [c.tool, c.answeredBy]),
        [
          ["tapedeck.workflow.start", "builtin"],
          ["tapedeck.workflow.result", "builtin"],
        ],
      );
      assert.equal(t.harness.calls.length, 0, "nothing was sent");
    } finally {
      await t.cleanup();
    }
  });
});
