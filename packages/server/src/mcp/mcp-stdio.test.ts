import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { connectClient, memoryWorkspace, mcpArgs, RawMcpChild, type Workspace } from "./test-support/mcp-child.js";

/**
 * `tapedeck mcp` as a host runs it (the installed command over stdio), driven by the official MCP
 * SDK client: the agent tools listed with their annotations, scripts run against a real MCP
 * server (server-memory) from the toolset, waits and signals, mistakes answered as MCP errors.
 */

let ws: Workspace;
let client: Client;
let clientErrors: Error[];
let serverStderr: () => string;

before(async () => {
  ws = memoryWorkspace();
  ({ client, errors: clientErrors, stderr: serverStderr } = await connectClient(ws, ["--labels", "conversation=c1"]));
});

after(async () => {
  await client.close();
  ws.cleanup();
});

const textOf = (result: unknown): string => {
  const content = (result as CallToolResult).content;
  assert.equal(content.length, 1);
  assert.equal(content[0]!.type, "text");
  return (content[0] as { text: string }).text;
};
const runIdOf = (text: string): string => /\b(run_[A-Za-z0-9_-]+)/.exec(text)?.[1] ?? assert.fail(`no run id in: ${text}`);

const WRITE_AND_READ = `import { graph } from "tapedeck:tools";
export default async (input: { name: string }) => {
  await graph.create_entities({ entities: [{ name: input.name, entityType: "person", observations: ["COBOL"] }] });
  const read = await graph.read_graph();
  return read.entities.map((e) => e.name);
};`;

describe("tapedeck mcp (code mode) through the official SDK client", () => {
  it("lists the agent tools with honest annotations, and the toolset's declarations in the instructions", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["run_script", "check_script", "test_script", "get_run", "list_runs", "signal_run", "cancel_run", "retry_run", "search_tools", "save_workflow"],
    );
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get("get_run")!.annotations?.readOnlyHint, true);
    assert.equal(byName.get("check_script")!.annotations?.readOnlyHint, true);
    assert.equal(byName.get("run_script")!.annotations?.readOnlyHint, false);
    assert.equal(byName.get("run_script")!.annotations?.destructiveHint, true);
    assert.equal(byName.get("cancel_run")!.annotations?.destructiveHint, true);
    assert.equal(byName.get("signal_run")!.annotations?.destructiveHint, false);
    assert.match(byName.get("run_script")!.description!, /does not cancel the run/);
    assert.deepEqual(byName.get("get_run")!.inputSchema.required, ["run_id"]);
    const instructions = client.getInstructions() ?? "";
    assert.match(instructions, /graph\.create_entities\(/);
    assert.match(instructions, /run_script/);
  });

  it("run_script runs a script against the toolset's MCP server end to end, with progress notifications, and get_run reads it", async () => {
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "run_script", arguments: { code: WRITE_AND_READ, input: { name: "Grace" } } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    const text = textOf(result);
    assert.equal(result.isError, false, text);
    assert.match(text, /completed/);
    assert.match(text, /"Grace"/);
    assert.match(text, /graph\.create_entities\(/);
    const runId = runIdOf(text);
    assert.ok(progress.length >= 1, "at least one progress notification");
    assert.ok(progress.every((p) => p.message?.includes(runId)));
    // Not "the last one says completed": the SDK client (1.32) handles a notification a microtask
    // after the answer that came just behind it in the same read, and then drops it as late.
    assert.match(progress[0]!.message!, /running|completed/);
    assert.deepEqual(
      progress.map((p) => p.progress),
      progress.map((_, i) => i + 1),
      "progress grows",
    );

    const read = await client.callTool({ name: "get_run", arguments: { run_id: runId } });
    assert.equal(read.isError, false);
    assert.match(textOf(read), new RegExp(`Run ${runId} completed`));
    const listed = textOf(await client.callTool({ name: "list_runs", arguments: {} }));
    assert.match(listed, new RegExp(runId));
  });

  it("check_script answers a script's type errors with their lines, and runs nothing", async () => {
    const result = await client.callTool({
      name: "check_script",
      arguments: { code: `import { graph } from "tapedeck:tools";\nexport default async () => graph.no_such_tool({});` },
    });
    const text = textOf(result);
    assert.match(text, /no_such_tool/);
    assert.match(text, /line 2|:2:|\b2 \|/);
    const ok = await client.callTool({ name: "check_script", arguments: { code: WRITE_AND_READ } });
    assert.match(textOf(ok), /^ok\b/i);
  });

  it("a run waiting for a signal says so, signal_run delivers it, and get_run waits for the end", async () => {
    const started = textOf(
      await client.callTool({
        name: "run_script",
        arguments: { code: `export default async () => { const n = await signal<number>("go"); return n * 2; }`, wait: 5 },
      }),
    );
    assert.match(started, /waiting/);
    assert.match(started, /"go"/);
    const runId = runIdOf(started);
    const sent = await client.callTool({ name: "signal_run", arguments: { run_id: runId, name: "go", payload: 21 } });
    assert.equal(sent.isError, false, textOf(sent));
    assert.match(textOf(sent), /Sent the signal "go"/);
    const ended = textOf(await client.callTool({ name: "get_run", arguments: { run_id: runId, wait: 60 } }));
    assert.match(ended, /completed/);
    assert.match(ended, /\b42\b/);

    // The same run as a resource: its state, journal and output, and listed among the session's runs.
    const uri = `tapedeck://runs/${runId}`;
    const read = await client.readResource({ uri });
    const document = JSON.parse((read.contents[0] as { text: string }).text) as { run: { status: string; labels?: object }; output?: unknown };
    assert.equal(document.run.status, "completed");
    assert.deepEqual(document.run.labels, { conversation: "c1" });
    assert.match(JSON.stringify(document.output), /42/);
    assert.ok((await client.listResources()).resources.some((r) => r.uri === uri));
    await assert.rejects(
      client.readResource({ uri: "tapedeck://runs/run_does_not_exist" }),
      (error: unknown) => error instanceof McpError && error.code === -32002,
    );
  });

  it("a run outside the labels, an unknown tool and malformed arguments are answered as MCP errors, and the server goes on", async () => {
    const missing = await client.callTool({ name: "get_run", arguments: { run_id: "run_does_not_exist" } });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /There is no run/);

    await assert.rejects(client.callTool({ name: "drop_tables", arguments: {} }), (error: unknown) => {
      assert.ok(error instanceof McpError);
      assert.equal(error.code, -32602);
      assert.match(error.message, /There is no tool "drop_tables"\. The tools are: run_script/);
      return true;
    });
    const malformed = await client.callTool({ name: "run_script", arguments: { code: 42 } });
    assert.equal(malformed.isError, true);
    assert.match(textOf(malformed), /"code" must be a string/);
    const unexpected = await client.callTool({ name: "list_runs", arguments: { status: "exploded" } });
    assert.equal(unexpected.isError, true);

    // Still up, and nothing but JSON-RPC reached the client on stdout.
    assert.match(textOf(await client.callTool({ name: "list_runs", arguments: {} })), /run_/);
    // The one error allowed is the SDK client's own race (see the progress test): a progress notification it took for late.
    assert.deepEqual(
      clientErrors.filter((e) => !/progress notification for an unknown token/.test(e.message)),
      [],
      serverStderr(),
    );
  });
});

describe("tapedeck mcp on the wire", () => {
  it("a host that sends the same request id again starts nothing twice; malformed JSON-RPC is answered; stdout carries only JSON-RPC", async () => {
    const raw = memoryWorkspace();
    const child = new RawMcpChild(mcpArgs(raw));
    try {
      const init = await child.initialize();
      assert.equal((init.result as { serverInfo: { name: string } }).serverInfo.name, "tapedeck", child.stderr);
      const call = { name: "run_script", arguments: { code: WRITE_AND_READ, input: { name: "Ada" } } };
      const first = await child.request(7, "tools/call", call);
      const again = await child.request(7, "tools/call", call);
      const firstText = textOf(first.result);
      assert.match(firstText, /completed/, firstText);
      assert.equal(runIdOf(textOf(again.result)), runIdOf(firstText), "the same request id reaches the same run");
      // Another id is another call: a second run, whose graph shows Ada once (the repeated request sent nothing).
      const other = await child.request("7", "tools/call", { name: "run_script", arguments: { code: WRITE_AND_READ, input: { name: "Lin" } } });
      assert.notEqual(runIdOf(textOf(other.result)), runIdOf(firstText), 'the string id "7" is another request');
      assert.match(textOf(other.result), /\["Ada","Lin"\]|\[\s*"Ada",\s*"Lin"\s*\]/);
      const listed = textOf((await child.request(8, "tools/call", { name: "list_runs", arguments: {} })).result);
      assert.equal(listed.match(/run_[A-Za-z0-9_-]+/g)?.length, 2, listed);

      // Not JSON at all, then a request with an unknown method: each gets its JSON-RPC error, the server stays up.
      child.writeLine("{ not json");
      const unknownMethod = await child.request(9, "tools/explode", {});
      assert.equal((unknownMethod.error as { code: number }).code, -32601);
      const badParams = await child.request(10, "tools/call", { name: 5 });
      assert.equal((badParams.error as { code: number }).code, -32602);
      assert.ok((await child.request(11, "tools/list")).result);

      for (const line of child.lines) {
        const message = JSON.parse(line) as { jsonrpc?: string };
        assert.equal(message.jsonrpc, "2.0", `stdout line is not JSON-RPC: ${line}`);
      }
    } finally {
      assert.equal(await child.close(), 0, child.stderr);
      raw.cleanup();
    }
  });
});
