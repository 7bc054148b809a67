import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JournalEntry } from "@tapedeck/protocol";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

/**
 * An engine that stops mid-run (here: closed while a call is in flight, as a crash would leave
 * it) leaves the run `running`; a new engine resumes it by replay. The same behaviour across a
 * real SIGKILL is tested through the CLI in @tapedeck/server.
 */
const SCRIPT = `import { w } from "tapedeck:tools";
export default async () => {
  const t0 = Date.now();
  const r0 = Math.random();
  const a = await w.read({ n: 1 });
  console.log("before", t0, r0);
  let b: unknown;
  try { b = await w.write({ n: 2 }); } catch (e) { b = { failed: (e as { code: string }).code }; }
  return { a, b, t0, r0, t1: Date.now(), r1: Math.random() };
};`;

function stopMidWrite(policy: "retry" | "at_most_once") {
  return harnessToolset(["w.read", "w.write"], { policies: { "w.write": { onInterruption: policy } } });
}

async function interruptedRun(policy: "retry" | "at_most_once") {
  const first = new ToolHarness({ "w.read": (a: { n: number }) => a.n * 10, "w.write": () => "first engine" });
  first.hold("w.write");
  const t = await testEngine({ hostTools: first.module() });
  const { id } = await t.engine.registerToolset(stopMidWrite(policy));
  const started = await t.engine.start({ toolset: id, source: SCRIPT });
  if (started.kind !== "started") throw new Error("refused");
  await first.heldCount(1);
  await t.engine.close();
  return { t, first, runId: started.runId };
}

const logged = (entries: readonly JournalEntry[]) => entries.find((e) => e.kind === "log");

describe("engine: recovery after the engine stops mid-call", () => {
  it("retry: re-sends the interrupted call with the same key and replays the rest without sending it", async () => {
    const { t, first, runId } = await interruptedRun("retry");
    const second = new ToolHarness({ "w.read": () => "must not be called", "w.write": () => "second engine" });
    const engine = await t.reopen({ hostTools: second.module() });
    try {
      assert.equal((await engine.getRun(runId)).status, "running");
      const [resumed] = await engine.resume();
      const end = await resumed!.end;
      assert.equal(end.status, "completed");
      if (end.status !== "completed") return;
      const output = end.output as Record<string, unknown>;
      assert.equal(output.a, 10);
      assert.equal(output.b, "second engine");
      // Only the interrupted call went out again, with the key of its first attempt.
      assert.deepEqual(
        second.calls.map((c) => [c.tool, c.key, c.attempt]),
        [["w.write", `${runId}/2`, 2]],
      );
      assert.equal(first.calls[1]!.key, `${runId}/2`);
      const journal = await engine.journal(runId);
      assert.ok(journal.some((e) => e.kind === "call.attempt" && e.seq === 2 && e.attempt === 2));
      // Date and Math.random replayed: the values logged before the stop are the ones returned.
      const log = logged(journal);
      assert.equal(log?.kind === "log" ? log.message : "", `before ${String(output.t0)} ${String(output.r0)}`);
      assert.equal(journal.filter((e) => e.kind === "log").length, 1, "replayed log lines are not journaled twice");
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("at_most_once: does not re-send; the script gets outcomeUnknown", async () => {
    const { t, runId } = await interruptedRun("at_most_once");
    const second = new ToolHarness({ "w.read": () => "must not be called", "w.write": () => "must not be called" });
    const engine = await t.reopen({ hostTools: second.module() });
    try {
      const [resumed] = await engine.resume(runId);
      const end = await resumed!.end;
      assert.equal(end.status, "completed");
      if (end.status !== "completed") return;
      assert.deepEqual((end.output as Record<string, unknown>).b, { failed: "outcomeUnknown" });
      assert.equal(second.calls.length, 0);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("resuming a completed run answers from its journal without running anything", async () => {
    const tools = new ToolHarness({ "w.read": () => 1, "w.write": () => 2 });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { id } = await t.engine.registerToolset(stopMidWrite("retry"));
      const started = await t.engine.start({ toolset: id, source: SCRIPT });
      if (started.kind !== "started") throw new Error("refused");
      const end = await started.end;
      assert.deepEqual(await t.engine.resume(), []);
      assert.deepEqual(await t.engine.end(started.runId), end);
    } finally {
      await t.cleanup();
    }
  });
});

describe("engine: one executor per run", () => {
  it("two concurrent resumes of a run share one execution", async () => {
    const { t, runId } = await interruptedRun("retry");
    const second = new ToolHarness({ "w.read": () => "never", "w.write": () => "resumed once" });
    const engine = await t.reopen({ hostTools: second.module() });
    try {
      const [a, b] = await Promise.all([engine.resume(runId), engine.resume(runId)]);
      const ends = await Promise.all([a[0]!.end, b[0]!.end]);
      assert.deepEqual(ends[0], ends[1]);
      assert.equal(ends[0].status, "completed");
      assert.equal(second.calls.length, 1, "the interrupted call was re-sent once");
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });
});
