import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

describe("cancel", () => {
  it("cancels an executing run: its calls in flight are abandoned and their late results ignored", async () => {
    const tools = new ToolHarness({ "w.slow": () => "late", "w.next": () => "never" });
    tools.hold("w.slow");
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.slow", "w.next"]));
      const started = await t.engine.start({
        toolset: id,
        source: `import { w } from "tapedeck:tools";\nexport default async () => { await w.slow(); return w.next(); };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      await tools.heldCount(1);
      const cancelled = await t.engine.cancel(started.runId, "the user changed their mind");
      assert.deepEqual(cancelled, { status: "cancelled", reason: "the user changed their mind" });
      assert.deepEqual(await started.end, cancelled);
      tools.release(0);
      await new Promise((resolve) => setImmediate(resolve));
      const journal = await t.engine.journal(started.runId);
      assert.equal(journal.at(-1)?.kind, "run.cancelled");
      assert.equal(tools.calls.length, 1, "nothing was sent after the cancel");
      assert.equal((await t.engine.getRun(started.runId)).status, "cancelled");
      assert.deepEqual(await t.engine.resume(), [], "a cancelled run is never resumed");
      assert.deepEqual(await t.engine.cancel(started.runId), cancelled, "cancelling again changes nothing");
      // Cancelled while its call was in flight: every recorded call replays, and the end is the cancel.
      const verified = await t.engine.verify(started.runId);
      assert.ok(verified.ok, verified.ok ? "" : verified.problem);
      assert.deepEqual(verified.ok && verified.end, cancelled);
    } finally {
      await t.cleanup();
    }
  });

  it("cancels a run no engine is executing (left running by an engine that stopped)", async () => {
    const tools = new ToolHarness({ "w.slow": () => "late" });
    tools.hold("w.slow");
    const t = await testEngine({ hostTools: tools.module() });
    const { id } = await t.engine.registerToolset(harnessToolset(["w.slow"]));
    const started = await t.engine.start({ toolset: id, source: `import { w } from "tapedeck:tools";\nexport default async () => w.slow();` });
    if (started.kind !== "started") throw new Error("refused");
    await tools.heldCount(1);
    await t.engine.close();
    const engine = await t.reopen({ hostTools: tools.module() });
    try {
      assert.equal((await engine.cancel(started.runId)).status, "cancelled");
      assert.equal((await engine.getRun(started.runId)).status, "cancelled");
      assert.deepEqual(await engine.resume(), []);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });
});
