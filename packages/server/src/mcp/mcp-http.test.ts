import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, afterEach, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ResourceUpdatedNotificationSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import type { Tapedeck } from "@tapedeck/sdk";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { createKey, startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * `tapedeck serve`'s `/mcp` (Streamable HTTP) driven by the official MCP SDK client on loopback:
 * the agent tools, a script run end to end with progress, a repeated request id, a key limited
 * to labels that never reaches another tenant's run, refused credentials (401), mistakes answered
 * as MCP errors with the server up, and a flood of sessions refused while the open ones go on.
 * On a SQLite data folder and on PostgreSQL (with TAPEDECK_TEST_POSTGRES_URL).
 */

/** Sessions the server holds at most in this file, in all and for one key and end user: the flood test reaches both. */
const MAX_SESSIONS = 6;
const MAX_PER_KEY = 3;
const HOST_MODULE = `export const notes = { add: async ({ text }) => ({ saved: text }) };`;
const SPEC = {
  hostTools: {
    notes: { add: { description: "Saves a note.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } } },
  },
};
const ADD_NOTE = `import { notes } from "tapedeck:tools";
export default async (input: { text: string }) => { const r = await notes.add({ text: input.text }); return r; };`;

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;
let adminKey: string;
let blueKey: string;
/** Limited to labels only: it acts as no end user, so it cannot run scripts. */
let labelsOnlyKey: string;
/** Every session a test opened (SDK clients and raw ones), ended after each test so the next starts under the bound. */
const opened: { client?: Client; transport?: StreamableHTTPClientTransport; raw?: { id: string; key: string } }[] = [];

/** A started server on some store, and how to make a key on that store. */
interface Started {
  readonly server: ServeChild;
  key(...args: string[]): Promise<string>;
  /** After the server stopped: drops what the store left. */
  done(): Promise<void>;
}

/** Every test of this file, against the server `start` starts (once for all of them). */
function mcpTests(start: () => Promise<Started>): void {
  let started: Started;
  before(async () => {
    started = await start();
    server = started.server;
    adminKey = server.adminKey!;
    admin = server.client(adminKey);
    toolset = (await admin.toolsets.create(SPEC)).id;
    blueKey = await started.key("--namespace", "alice", "--label", "team=blue");
    labelsOnlyKey = await started.key("--label", "team=blue");
  });

  afterEach(async () => {
    for (const session of opened.splice(0)) {
      if (session.transport) await session.transport.terminateSession().catch(() => undefined);
      if (session.client) await session.client.close().catch(() => undefined);
      if (session.raw)
        await fetch(mcpUrl(), { method: "DELETE", headers: { authorization: `Bearer ${session.raw.key}`, "mcp-session-id": session.raw.id } }).catch(
          () => undefined,
        );
    }
  });

  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr());
    server.cleanup();
    await started.done();
  });

  endToEnd();
}

describe("/mcp (Streamable HTTP) through the official SDK client, on SQLite", () => {
  mcpTests(async () => {
    const server = await startServeChild({
      hostModule: HOST_MODULE,
      args: ["--mcp-max-sessions", String(MAX_SESSIONS), "--mcp-max-sessions-per-key", String(MAX_PER_KEY)],
    });
    return { server, key: (...args) => createKey(server.dataDir, ...args), done: () => Promise.resolve() };
  });
});

describeWithPostgres("/mcp (Streamable HTTP) through the official SDK client, on PostgreSQL", (url) => {
  mcpTests(async () => {
    const schema = freshSchemaName();
    const store = schemaUrl(url, schema);
    // What every node on a store URL must be given (`shared-secrets.ts`).
    const env = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
    const server = await startServeChild({
      hostModule: HOST_MODULE,
      args: ["--store", store, "--mcp-max-sessions", String(MAX_SESSIONS), "--mcp-max-sessions-per-key", String(MAX_PER_KEY)],
      fresh: true,
      env,
    });
    return { server, key: (...args) => createKey(server.dataDir, "--store", store, ...args), done: () => dropSchema(url, schema) };
  });
});

const mcpUrl = (query = `toolset=${toolset}&namespace=alice`): URL => new URL(`/mcp?${query}`, server.url);

async function connect(key: string, query?: string): Promise<Client> {
  const client = new Client({ name: "tapedeck-http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(mcpUrl(query), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  opened.push({ client, transport });
  return client;
}

const textOf = (result: unknown): string => {
  const content = (result as CallToolResult).content;
  assert.equal(content[0]!.type, "text");
  return (content[0] as { text: string }).text;
};
const runIdOf = (text: string): string => /\b(run_[A-Za-z0-9_-]+)/.exec(text)?.[1] ?? assert.fail(`no run id in: ${text}`);

/** One JSON-RPC POST as a host's transport sends it; answers the status, headers and the JSON-RPC messages of the body (JSON or SSE). */
async function post(
  body: string,
  headers: Record<string, string>,
  query?: string,
): Promise<{ status: number; headers: Headers; messages: Record<string, unknown>[] }> {
  const response = await fetch(mcpUrl(query), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body,
  });
  const text = await response.text();
  const messages = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: ") && line.length > 6)
        .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
    : text === ""
      ? []
      : [JSON.parse(text) as Record<string, unknown>];
  return { status: response.status, headers: response.headers, messages };
}

/** A session opened by hand (initialize, then initialized): its id. */
async function rawSession(key: string): Promise<string> {
  const auth = { authorization: `Bearer ${key}` };
  const init = await post(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
    auth,
  );
  assert.equal(init.status, 200, JSON.stringify(init.messages));
  const id = init.headers.get("mcp-session-id") ?? assert.fail("no session id");
  const initialized = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), { ...auth, "mcp-session-id": id });
  assert.equal(initialized.status, 202);
  opened.push({ raw: { id, key } });
  return id;
}

function endToEnd(): void {
  it("lists the agent tools with their annotations and the toolset's declarations in the instructions", async () => {
    const client = await connect(adminKey).catch((error: unknown) => assert.fail(`${String(error)}\n${server.stderr()}`));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "run_script"));
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get("get_run")!.annotations?.readOnlyHint, true);
    assert.equal(byName.get("run_script")!.annotations?.destructiveHint, true);
    assert.match(byName.get("run_script")!.description!, /does not cancel the run/);
    assert.match(client.getInstructions() ?? "", /notes\.add\(/);
    assert.equal(client.getServerVersion()?.name, "tapedeck");
  });

  it("run_script runs a script end to end with progress notifications, and get_run and list_runs find the run", async () => {
    const client = await connect(adminKey);
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "run_script", arguments: { code: ADD_NOTE, input: { text: "hello" } } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    const text = textOf(result);
    assert.equal(result.isError, false, text);
    assert.match(text, /completed/);
    assert.match(text, /"hello"/);
    const runId = runIdOf(text);
    assert.ok(progress.length >= 1, "at least one progress notification");
    assert.ok(progress.every((p) => p.message?.includes(runId)));
    // Not "the last one says completed": the SDK client (1.32) handles a notification a microtask
    // after the answer that came just behind it in the same read, and then drops it as late.
    assert.match(progress[0]!.message!, /running|completed/);
    assert.match(textOf(await client.callTool({ name: "get_run", arguments: { run_id: runId } })), new RegExp(`Run ${runId} completed`));
    assert.match(textOf(await client.callTool({ name: "list_runs", arguments: {} })), new RegExp(runId));
  });

  it("a request sent again with the same id in the same session starts nothing twice; another session's same id is another request", async () => {
    const auth = { authorization: `Bearer ${adminKey}` };
    const session = await rawSession(adminKey);
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "run_script", arguments: { code: ADD_NOTE, input: { text: "once" } } },
    });
    const first = await post(call, { ...auth, "mcp-session-id": session });
    const again = await post(call, { ...auth, "mcp-session-id": session });
    const runOf = (messages: Record<string, unknown>[]): string => runIdOf(textOf(messages.find((m) => m.id === 7)!.result));
    assert.equal(runOf(again.messages), runOf(first.messages), "the repeated request reaches the same run");
    const other = await post(call, { ...auth, "mcp-session-id": await rawSession(adminKey) });
    assert.notEqual(runOf(other.messages), runOf(first.messages));
    const runs = await admin.runs.list({ limit: 200 });
    assert.equal(runs.filter((r) => r.id === runOf(first.messages)).length, 1);
  });

  it("a key limited to labels starts runs with them and never reads another tenant's run through /mcp", async () => {
    const red = await admin.runs.start({ toolset, source: ADD_NOTE, input: { text: "red secret" }, namespace: "alice", labels: { team: "red" } });
    const redId = red.kind === "started" ? red.run.id : assert.fail("refused");
    await admin.runs.get(redId, { wait: 30 });
    const blue = await connect(blueKey);
    const read = await blue.callTool({ name: "get_run", arguments: { run_id: redId } });
    assert.equal(read.isError, true);
    assert.match(textOf(read), /not found|no run/i);
    assert.doesNotMatch(textOf(read), /red secret/);
    assert.doesNotMatch(textOf(await blue.callTool({ name: "list_runs", arguments: {} })), new RegExp(redId));
    for (const name of ["signal_run", "cancel_run"]) {
      const refused = await blue.callTool({ name, arguments: { run_id: redId, ...(name === "signal_run" ? { name: "go", payload: 1 } : {}) } });
      assert.equal(refused.isError, true, name);
    }
    const own = textOf(await blue.callTool({ name: "run_script", arguments: { code: ADD_NOTE, input: { text: "blue" } } }));
    assert.deepEqual((await admin.runs.get(runIdOf(own))).labels, { team: "blue" });
    await assert.rejects(connect(labelsOnlyKey), /limited to labels, not to a namespace/);
    // An end user's token: its namespace and labels, with no namespace in the URL.
    const { token } = await admin.tokens.create({ namespace: "alice", labels: { team: "green" }, ttlSeconds: 600 });
    const green = await connect(token, `toolset=${toolset}`);
    const greenRun = runIdOf(textOf(await green.callTool({ name: "run_script", arguments: { code: ADD_NOTE, input: { text: "green" } } })));
    const greenRecord = await admin.runs.get(greenRun);
    assert.deepEqual([greenRecord.namespace, greenRecord.labels], ["alice", { team: "green" }]);
    assert.equal((await green.callTool({ name: "get_run", arguments: { run_id: redId } })).isError, true);
    // Another credential naming the admin's session is answered as a missing session.
    const adminSession = await rawSession(adminKey);
    const stolen = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), {
      authorization: `Bearer ${blueKey}`,
      "mcp-session-id": adminSession,
    });
    assert.equal(stolen.status, 404);
  });

  it("runs are resources within the scope: tapedeck://runs/{id} read and listed, and a subscription hears the run change", async () => {
    const client = await connect(blueKey);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(
      resourceTemplates.map((t) => t.uriTemplate),
      ["tapedeck://runs/{id}"],
    );
    const waiting = textOf(await client.callTool({ name: "run_script", arguments: { code: `export default async () => (await signal<number>("go")) * 2;` } }));
    assert.match(waiting, /waiting/);
    const runId = runIdOf(waiting);
    const uri = `tapedeck://runs/${runId}`;
    const updated = new Promise<string>((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
    await client.subscribeResource({ uri });
    await admin.runs.signal(runId, { name: "go", payload: 21 });
    assert.equal(await updated, uri);
    assert.equal((await admin.runs.get(runId, { wait: 30 })).status, "completed");
    const read = await client.readResource({ uri });
    const document = JSON.parse((read.contents[0] as { text: string }).text) as {
      run: { id: string; status: string };
      journal: { entries: unknown[] };
      output?: { text: string };
    };
    assert.equal(document.run.id, runId);
    assert.equal(document.run.status, "completed");
    assert.ok(document.journal.entries.length > 0);
    assert.match(JSON.stringify(document.output), /42/);
    assert.ok((await client.listResources()).resources.some((r) => r.uri === uri));

    // Another tenant's run is not found, and not listed.
    const red = await admin.runs.start({ toolset, source: ADD_NOTE, input: { text: "red" }, namespace: "alice", labels: { team: "red" } });
    const redUri = `tapedeck://runs/${red.kind === "started" ? red.run.id : assert.fail("refused")}`;
    await assert.rejects(client.readResource({ uri: redUri }), (error: unknown) => error instanceof McpError && error.code === -32002);
    await assert.rejects(client.subscribeResource({ uri: redUri }), (error: unknown) => error instanceof McpError && error.code === -32002);
    assert.ok(!(await client.listResources()).resources.some((r) => r.uri === redUri));
    await assert.rejects(client.readResource({ uri: "https://example.com/x" }), (error: unknown) => error instanceof McpError && error.code === -32602);
  });

  it("a missing or unknown credential gets 401 with WWW-Authenticate: Bearer, and the SDK client cannot connect", async () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    const none = await post(initialize, {});
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer /);
    assert.equal((none.messages[0]!.error as { code: number }).code, -32001);
    const bad = await post(initialize, { authorization: "Bearer tdk_not-a-key" });
    assert.equal(bad.status, 401);
    assert.match(bad.headers.get("www-authenticate") ?? "", /^Bearer .*error="invalid_token"/);
    await assert.rejects(connect("tdk_not-a-key"), /401|Unauthorized|Unknown API key/i);
    assert.ok(server.running());
  });

  it("a page of another origin is refused (DNS rebinding); one of this machine is served", async () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    const evil = await post(initialize, { authorization: `Bearer ${adminKey}`, origin: "http://evil.example.com" });
    assert.equal(evil.status, 403);
    const local = await post(initialize, { authorization: `Bearer ${adminKey}`, origin: "http://localhost:6274" });
    assert.equal(local.status, 200);
    opened.push({ raw: { id: local.headers.get("mcp-session-id")!, key: adminKey } });
  });

  it("malformed JSON-RPC, an unknown tool, a bad toolset or mode get MCP errors, and the server goes on", async () => {
    const auth = { authorization: `Bearer ${adminKey}` };
    const session = await rawSession(adminKey);
    const notJson = await post("{ not json", { ...auth, "mcp-session-id": session });
    assert.equal(notJson.status, 400);
    assert.equal((notJson.messages[0]!.error as { code: number }).code, -32700);
    const notRpc = await post(JSON.stringify({ hello: "world" }), { ...auth, "mcp-session-id": session });
    assert.equal(notRpc.status, 400);
    assert.ok(notRpc.messages[0]!.error, JSON.stringify(notRpc.messages));

    // Arguments past the body limit (4 MiB): refused before they are read, as a JSON-RPC error.
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "run_script", arguments: { code: "x".repeat(5 * 1024 * 1024) } },
    });
    const tooLarge = await post(huge, { ...auth, "mcp-session-id": session });
    assert.equal(tooLarge.status, 413);
    assert.match((tooLarge.messages[0]!.error as { message: string }).message, /too large|MiB/i);

    const client = await connect(adminKey);
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (error: unknown) => error instanceof McpError && error.code === -32602);
    const badArgs = await client.callTool({ name: "get_run", arguments: {} });
    assert.equal(badArgs.isError, true);

    await assert.rejects(connect(adminKey, ""), /toolset/);
    await assert.rejects(connect(adminKey, `toolset=${toolset}`), /Name the end user/);
    await assert.rejects(connect(adminKey, "toolset=ts_nope&namespace=alice"), /No toolset/);
    await assert.rejects(connect(adminKey, `toolset=${toolset}&namespace=alice&mode=direct`), /code mode only/);
    assert.ok((await client.listTools()).tools.length > 0, "the session still answers");
  });

  it("a flood of sessions stops at the key's bound (429), then the server's (503); open sessions and other tenants go on, a closed one frees a place", async () => {
    const kept = await connect(adminKey);
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "f", version: "1" } },
    });
    /** Opens sessions for `namespace` with the admin key until one is refused: the ids opened and the refusal. */
    const flood = async (namespace: string): Promise<{ ids: string[]; refused: { status: number; messages: Record<string, unknown>[] } }> => {
      const ids: string[] = [];
      for (let i = 0; i <= MAX_SESSIONS; i++) {
        const answer = await post(initialize, { authorization: `Bearer ${adminKey}` }, `toolset=${toolset}&namespace=${namespace}`);
        if (answer.status !== 200) return { ids, refused: answer };
        ids.push(answer.headers.get("mcp-session-id")!);
        opened.push({ raw: { id: ids.at(-1)!, key: adminKey } });
      }
      return assert.fail(`${MAX_SESSIONS + 1} sessions opened for ${namespace}: nothing was refused`);
    };
    const alice = await flood("alice");
    assert.equal(alice.ids.length, MAX_PER_KEY - 1, "the kept session is the first of alice's");
    assert.equal(alice.refused.status, 429);
    assert.match((alice.refused.messages[0]!.error as { message: string }).message, /holds 3 MCP sessions/);
    // Another tenant still gets a session, and the open ones are served.
    const blue = await connect(blueKey);
    assert.ok((await blue.listTools()).tools.length > 0);
    assert.ok((await kept.listTools()).tools.length > 0, "an open session is still served");
    // The server's bound: 6 in all (alice's 3 and blue's 1 open, so bob gets 2).
    const bob = await flood("bob");
    assert.equal(bob.ids.length, MAX_SESSIONS - MAX_PER_KEY - 1);
    assert.equal(bob.refused.status, 503);
    assert.match((bob.refused.messages[0]!.error as { message: string }).message, /Too many MCP sessions/);
    assert.ok(server.running());
    const closed = await fetch(mcpUrl(), { method: "DELETE", headers: { authorization: `Bearer ${adminKey}`, "mcp-session-id": alice.ids[0]! } });
    assert.equal(closed.status, 200);
    const after = await post(initialize, { authorization: `Bearer ${adminKey}` });
    assert.equal(after.status, 200, "the closed session's place is free again");
    opened.push({ raw: { id: after.headers.get("mcp-session-id")!, key: adminKey } });
  });
}
