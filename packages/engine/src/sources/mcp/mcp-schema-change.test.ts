import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { EngineEvent } from "../../engine.js";
import { McpToolSource } from "./mcp-tool-source.js";
import { connectHttp, STDIO_MAIN } from "../../test-support/mcp/fixture-clients.js";
import { startHttpFixture, type HttpFixture } from "../../test-support/mcp/http-fixture.js";
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
      assert.deepEqual(
        waits.map((w) => [w.kind, w.seq, "reason" in w ? w.reason : ""]),
        [["parked", 2, "tool.schema_changed"]],
      );
      assert.match("message" in waits[0]! ? waits[0].message : "", /fx\.echo is no longer offered by its MCP server/);
      assert.deepEqual(
        t.events.filter((e) => e.type === "tool.schema_changed").map((e) => ("wait" in e ? e.wait.seq : 0)),
        [2],
      );
      assert.deepEqual(
        (await t.engine.pendingDecisions()).map((d) => [d.runId, d.seq, d.kind]),
        [[t.runId, 2, "parked"]],
      );
      await t.engine.reject(t.runId, 2, { reason: "the tool is gone" });
      const end = await t.end;
      assert.deepEqual(end, {
        status: "completed",
        output:
          "schema_changed: The call to fx.echo was held back because its tool's schema changed, and the harness rejected it: the tool is gone. It was not sent.",
      });
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
      assert.deepEqual(
        (await engine.pendingDecisions()).map((d) => [d.seq, d.kind]),
        [[2, "parked"]],
      );
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

/**
 * The check needs no notification: every connection (the first of a process too, and every
 * reconnect) reads the tool list once, and every call sent on it — first attempts and re-sends
 * alike — is checked against that list. The fixture runs over HTTP in this process, so its tool
 * list outlives the engines (a fresh Engine on the same data folder is what a new process is).
 */
describe("MCP tool schema changes seen by a new connection", () => {
  /** Edits the fixture's tool list from outside Tapedeck (as the server's redeploy would). */
  async function edit(url: string, ...edits: ({ remove: string } | { add: string; requires?: string[]; hang?: boolean })[]): Promise<void> {
    const connection = await connectHttp(url);
    const { client } = connection;
    try {
      for (const change of edits) {
        const result =
          "remove" in change
            ? await client.callTool({ name: "remove_tool", arguments: { name: change.remove } })
            : await client.callTool({ name: "add_tool", arguments: { name: change.add, requires: change.requires ?? [], hang: change.hang ?? false } });
        assert.notEqual(result.isError, true, JSON.stringify(result));
      }
    } finally {
      await connection.close();
    }
  }

  async function withHttpFixture(fn: (fixture: HttpFixture, t: Awaited<ReturnType<typeof testEngine>>) => Promise<void>): Promise<void> {
    const fixture = await startHttpFixture();
    const t = await testEngine({ mcp: new McpToolSource() });
    try {
      await fn(fixture, t);
    } finally {
      await t.cleanup();
      await fixture.close();
    }
  }

  async function startOn(t: Awaited<ReturnType<typeof testEngine>>, url: string, source: string, policies = {}) {
    const { id } = await t.engine.registerToolset({ mcpServers: { fx: { url } }, policies });
    const started = await t.engine.start({ toolset: id, source: `import { fx, ToolError } from "tapedeck:tools";\n${source}` });
    if (started.kind !== "started") throw new Error(`refused: ${JSON.stringify(started.diagnostics)}`);
    return started.runId;
  }

  const waitsOf = (pause: unknown) =>
    ((pause as { status?: string; waits?: { kind: string; seq: number; reason?: string; message?: string }[] }).waits ?? []).map((w) => [
      w.kind,
      w.seq,
      w.reason ?? "",
      w.message ?? "",
    ]);

  it("a run woken in a new engine after its tool's schema changed during the wait parks the call (tool.schema_changed) instead of sending it", async () => {
    await withHttpFixture(async (fixture, t) => {
      const runId = await startOn(t, fixture.url, `export default async () => { await signal("go"); return fx.echo({ text: "x" }); };`);
      assert.equal((await t.engine.settled(runId))?.status, "waiting");
      await t.engine.close();
      // While the run sleeps, echo is redeployed with a required argument the call does not have.
      await edit(fixture.url, { remove: "echo" }, { add: "echo", requires: ["lang"] });
      const engine = await t.reopen({ mcp: new McpToolSource() });
      try {
        const events: EngineEvent[] = [];
        engine.on((event) => events.push(event));
        await engine.signal(runId, "go", null);
        const pause = await engine.settled(runId);
        const [wait] = waitsOf(pause);
        assert.deepEqual(wait?.slice(0, 3), ["parked", 2, "tool.schema_changed"]);
        assert.match(String(wait?.[3]), /^The input schema of fx\.echo changed on its MCP server and the call's arguments no longer fit it: .*lang/);
        assert.deepEqual(
          events.filter((e) => e.type === "tool.schema_changed").map((e) => ("wait" in e ? e.wait.seq : 0)),
          [2],
        );
        assert.equal(fixture.callsOf("echo"), 0, "the call was not sent");
        assert.deepEqual(
          (await engine.journal(runId)).slice(-2).map((e) => e.kind),
          ["call.scheduled", "call.parked"],
        );
      } finally {
        await engine.close();
      }
    });
  });

  it("a call the engine's stop interrupted is checked when it is sent again after the restart (retry): its tool is gone, so it is parked", async () => {
    await withHttpFixture(async (fixture, t) => {
      const runId = await startOn(
        t,
        fixture.url,
        `export default async () => { try { return await fx.hang({}); } catch (e) { return (e as ToolError).code; } };`,
      );
      await fixture.calls("hang", 1);
      await t.engine.close();
      await edit(fixture.url, { remove: "hang" });
      const engine = await t.reopen({ mcp: new McpToolSource() });
      try {
        const [resumed] = await engine.resume(runId);
        assert.ok(resumed);
        const pause = await engine.settled(runId);
        assert.deepEqual(
          waitsOf(pause).map((w) => w.slice(0, 3)),
          [["parked", 1, "tool.schema_changed"]],
        );
        assert.match(String(waitsOf(pause)[0]?.[3]), /fx\.hang is no longer offered by its MCP server/);
        const journal = await engine.journal(runId);
        assert.deepEqual(
          journal.slice(-2).map((e) => e.kind),
          ["call.attempt", "call.parked"],
        );
        await engine.reject(runId, 1);
        assert.deepEqual(await engine.end(runId), { status: "completed", output: "schema_changed" });
      } finally {
        await engine.close();
      }
    });
  });

  it("a call interrupted in this process is checked again on the new connection its retry makes", async () => {
    await withHttpFixture(async (fixture, t) => {
      // drop({ vanish }) takes itself off the list, then cuts the connection: the retry finds it gone.
      const runId = await startOn(
        t,
        fixture.url,
        `export default async () => { try { return await fx.drop({ stage: "before-response", vanish: true }); } catch (e) { return (e as ToolError).code; } };`,
      );
      const pause = await t.engine.settled(runId);
      assert.deepEqual(
        waitsOf(pause).map((w) => w.slice(0, 3)),
        [["parked", 1, "tool.schema_changed"]],
      );
      const journal = await t.engine.journal(runId);
      assert.deepEqual(
        journal.slice(-2).map((e) => e.kind),
        ["call.attempt", "call.parked"],
      );
      await fixture.calls("drop", 1);
    });
  });

  it("the harness's approval of a changed call holds across a restart: the call, interrupted after it was approved, is sent again as it is", async () => {
    await withHttpFixture(async (fixture, t) => {
      const runId = await startOn(t, fixture.url, `export default async () => { await signal("go"); return fx.hang({}); };`);
      await t.engine.settled(runId);
      await edit(fixture.url, { remove: "hang" }, { add: "hang", requires: ["lang"], hang: true });
      await t.engine.close();
      const second = await t.reopen({ mcp: new McpToolSource() });
      try {
        await second.signal(runId, "go", null);
        assert.deepEqual(
          waitsOf(await second.settled(runId)).map((w) => w.slice(0, 3)),
          [["parked", 2, "tool.schema_changed"]],
        );
        await second.approve(runId, 2);
        await fixture.calls("hang", 1);
      } finally {
        await second.close();
      }
      const third = await t.reopen({ mcp: new McpToolSource() });
      try {
        await third.resume(runId);
        // Sent again (attempt 2) without being parked again: the approval was for this schema.
        await fixture.calls("hang", 2);
        const kinds = (await third.journal(runId)).map((e) => e.kind);
        assert.equal(kinds.filter((k) => k === "call.parked").length, 1, kinds.join(" "));
        assert.equal(kinds.at(-1), "call.attempt");
        await third.cancel(runId, "done");
      } finally {
        await third.close();
      }
    });
  });

  it("reads the tool list once per connection, not per call: the registration's list serves this engine's calls, a new engine reads it once", async () => {
    await withHttpFixture(async (fixture, t) => {
      const script = `export default async () => { const out: string[] = []; for (let i = 0; i < 10; i++) out.push((await fx.echo({ text: String(i) })).text); return out.length; };`;
      const first = await startOn(t, fixture.url, script);
      assert.deepEqual(await t.engine.end(first), { status: "completed", output: 10 });
      assert.equal(fixture.lists, 1, "the registration's list is the connection's");
      await t.engine.close();
      const engine = await t.reopen({ mcp: new McpToolSource() });
      try {
        const { id } = await engine.registerToolset({ mcpServers: { fx: { url: fixture.url } } });
        assert.equal(fixture.lists, 2);
        const started = await engine.start({ toolset: id, source: `import { fx } from "tapedeck:tools";\n${script}` });
        assert.equal(started.kind, "started");
        if (started.kind === "started") assert.deepEqual(await started.end, { status: "completed", output: 10 });
        assert.equal(fixture.lists, 2);
      } finally {
        await engine.close();
      }
      const third = await t.reopen({ mcp: new McpToolSource() });
      try {
        const started = await third.start({
          toolset: (await third.listRuns({ limit: 1 }))[0]!.toolsetId,
          source: `import { fx } from "tapedeck:tools";\n${script}`,
        });
        if (started.kind !== "started") throw new Error("refused");
        assert.deepEqual(await started.end, { status: "completed", output: 10 });
        assert.equal(fixture.lists, 3, "a new engine's first connection reads the list once");
      } finally {
        await third.close();
      }
    });
  });
});
