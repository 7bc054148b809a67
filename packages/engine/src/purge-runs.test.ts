import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

describe("Engine.purgeRuns", () => {
  it("deletes ended runs whole, batch by batch, after a dry run that counts them; a waiting run stays and still ends", async () => {
    const tools = new ToolHarness({ "w.echo": (args: { v?: string }) => ({ echoed: args.v ?? "" }) });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.echo"]));
      const start = async (source: string) => {
        const started = await t.engine.start({ toolset: id, source: `import { w } from "tapedeck:tools";\n${source}` });
        if (started.kind !== "started") throw new Error("refused");
        return started;
      };
      const done = await start(`export default async () => w.echo({ v: "one" });`);
      const failed = await start(`export default async () => { await w.echo({ v: "two" }); throw new Error("no"); };`);
      const waiting = await start(`export default async () => [await w.echo({ v: "three" }), await signal("go")];`);
      await done.end;
      await failed.end;
      await t.engine.settled(waiting.runId);
      assert.equal((await t.engine.getRun(waiting.runId)).status, "waiting");
      const before = Date.now() + 1;

      const counted = await t.engine.purgeRuns({ before, dryRun: true });
      assert.equal(counted.runs, 2);
      assert.equal(counted.dryRun, true);
      assert.equal((await t.engine.listRuns()).length, 3, "a dry run deletes nothing");

      const purged = await t.engine.purgeRuns({ before, batchSize: 1 });
      assert.deepEqual(
        { runs: purged.runs, entries: purged.journalEntries, batches: purged.batches, complete: purged.complete },
        { runs: 2, entries: counted.journalEntries, batches: 2, complete: true },
      );
      await assert.rejects(t.engine.getRun(done.runId), /not_found|No run/);
      assert.deepEqual(
        (await t.engine.listRuns()).map((run) => run.id),
        [waiting.runId],
      );
      await t.engine.signal(waiting.runId, "go", "now");
      assert.deepEqual(await waiting.end, { status: "completed", output: [{ echoed: "three" }, "now"] });
      const stopped = await t.engine.purgeRuns({ before: Date.now() + 1, maxBatches: 0 });
      assert.equal(stopped.complete, false, "a purge stopped at its batches says so");
    } finally {
      await t.cleanup();
    }
  });
});
