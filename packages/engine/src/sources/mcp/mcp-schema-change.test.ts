import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { EngineEvent } from "../../engine.js";
import { McpToolSource } from "./mcp-tool-source.js";
import { STDIO_MAIN } from "../../test-support/mcp/fixture-clients.js";
import { testEngine, testSandboxes } from "../../test-support/engines.js";

/**
 * A server's tools change under a run (the fixture's add_tool / remove_tool announce it with
 * notifications/tools/list_changed): a call whose tool is gone is parked, not sent, and waits
 * for the harness; a schema that changed compatibly lets calls go.
 */
after(() => testSandboxes().close());

const server = { command: process.execPath, args: [STDIO_MAIN] };

async function start(source: string) {
  const t = await testEngine({ mcp: new McpToolSource() });
  const events: EngineEvent[] = [];
  t.engine.on((event) => events.push(event));
  const { id } = await t.engine.registerToolset({ mcpServers: { fx: server } });
  const started = await t.engine.start({ toolset: id, source: `import { fx, ToolError } from "tapedeck:tools";\n${source}` });
  if (started.kind !== "started") throw new Error("refused");
  return { ...t, events, runId: started.runId, end: started.end };
}

describe("MCP tool schema changes", () => {
  it("a call to a tool the server no longer offers is parked with tool.schema_changed; rejecting it gives the script schema_changed", async () => {
    const t = await start(`export default async () => {
      await fx.remove_tool({ name: "echo" });
      try { return await fx.echo({ text: "x" }); } catch (e) { return (e as ToolError).code + ": " + (e as ToolError).message; }
    };`);
    try {
      const pause = await t.engine.settled(t.runId);
      assert.equal(pause?.status, "waiting");
      const waits = pause?.status === "waiting" ? pause.waits : [];
      assert.deepEqual(waits.map((w) => [w.kind, w.seq, "reason" in w ? w.reason : ""]), [["parked", 2, "tool.schema_changed"]]);
      assert.match("message" in waits[0]! ? waits[0].message : "", /fx\.echo is no longer offered by its MCP server/);
      assert.deepEqual(t.events.filter((e) => e.type === "tool.schema_changed").map((e) => ("wait" in e ? e.wait.seq : 0)), [2]);
      assert.deepEqual((await t.engine.pendingDecisions()).map((d) => [d.runId, d.seq, d.kind]), [[t.runId, 2, "parked"]]);
      await t.engine.reject(t.runId, 2, { reason: "the tool is gone" });
      const end = await t.end;
      assert.deepEqual(end, { status: "completed", output: "schema_changed: The call to fx.echo was held back because its tool's schema changed, and the harness rejected it: the tool is gone. It was not sent." });
      const kinds = (await t.engine.journal(t.runId)).map((e) => e.kind);
      assert.deepEqual(kinds.slice(3), ["call.scheduled", "call.parked", "call.decided", "call.failed", "run.completed"]);
    } finally {
      await t.cleanup();
    }
  });

  it("approving a parked call sends it as it is (here the server answers that the tool is unknown)", async () => {
    const t = await start(`export default async () => {
      await fx.remove_tool({ name: "echo" });
      try { return await fx.echo({ text: "x" }); } catch (e) { return (e as ToolError).code; }
    };`);
    try {
      await t.engine.settled(t.runId);
      await t.engine.approve(t.runId, 2);
      assert.deepEqual(await t.end, { status: "completed", output: "tool_error" });
    } finally {
      await t.cleanup();
    }
  });

  it("a parked call stays parked across a restart and is decided in the next engine", async () => {
    const t = await start(`export default async () => {
      await fx.remove_tool({ name: "echo" });
      try { return await fx.echo({ text: "x" }); } catch (e) { return (e as ToolError).code; }
    };`);
    await t.engine.settled(t.runId);
    await t.engine.close();
    const engine = await t.reopen({ mcp: new McpToolSource() });
    try {
      assert.deepEqual((await engine.pendingDecisions()).map((d) => [d.seq, d.kind]), [[2, "parked"]]);
      await engine.reject(t.runId, 2);
      assert.deepEqual(await engine.end(t.runId), { status: "completed", output: "schema_changed" });
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("a tool whose schema changed in a way the arguments still fit is called without parking", async () => {
    const t = await start(`export default async () => {
      await fx.remove_tool({ name: "echo" });
      await fx.add_tool({ name: "echo" });
      return fx.echo({ text: "x" });
    };`);
    try {
      const end = await t.end;
      assert.equal(end.status, "completed");
      assert.ok(!(await t.engine.journal(t.runId)).some((e) => e.kind === "call.parked"));
      assert.ok(!t.events.some((e) => e.type === "tool.schema_changed"));
    } finally {
      await t.cleanup();
    }
  });
});
