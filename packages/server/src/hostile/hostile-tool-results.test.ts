import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";
import {
  DIFFERING_DUPLICATE,
  HUGE_BYTES,
  LONE_SURROGATE_TOOL,
  SAME_DUPLICATE,
  startHostileMcpServer,
  UNSAFE_NAMES,
  type HostileMcpServer,
} from "./hostile-mcp-server.js";

/**
 * A hostile MCP server against a real `tapedeck serve`: its tool list (names listed twice,
 * names that are not names, a definition with no JSON form) and its results (past the size
 * limit, error text past any use, content no client knows, bytes that are not JSON-RPC, no
 * answer, keys that are Object.prototype's members, nesting past any stack, lone surrogates).
 * The operator registered it (a tenant's key may not reach loopback: `mcp-addresses.test.ts`);
 * the attacker's runs call it. After each, the server is up, the attacker's run has a clear
 * failure, and another tenant's run completes.
 */
let hostile: HostileServer;
let mcp: HostileMcpServer;
let toolset: string;
let registered: { readonly warnings: readonly string[]; readonly tools: readonly string[]; readonly prompt: string };

before(async () => {
  mcp = await startHostileMcpServer();
  hostile = await startHostileServer();
  const created = await hostile.admin.toolsets.create({ mcpServers: { h: { url: mcp.url } }, policies: { "h.hang": { timeout: "2s" } } });
  toolset = created.id;
  const info = await hostile.admin.toolsets.get(toolset);
  registered = { warnings: created.warnings, tools: info.toolset.tools.map((t) => t.name), prompt: created.declarations.prompt };
});

after(async () => {
  await hostile.close();
  await mcp.close();
});

/** Starts `body` (statements returning the output) as the attacker on the hostile toolset. */
async function start(body: string) {
  return hostile.attacker.runs.start({ toolset, source: `import { h, ToolError } from "tapedeck:tools";\nexport default async () => {\n${body}\n};` });
}

/** Runs `body` as the attacker; resolves with the finished run. */
async function attack(body: string) {
  const started = await start(body);
  assert.equal(started.kind, "started", JSON.stringify(started));
  if (started.kind !== "started") throw new Error("refused");
  const run = await hostile.attacker.runs.get(started.run.id, { wait: 30 });
  assert.notEqual(
    run.status,
    "running",
    `the attacker's run did not end: ${JSON.stringify(run).slice(0, 500)}; the server's stderr:\n${hostile.server.stderr()}`,
  );
  return run;
}

/** The script's catch: `{ ok: result }`, or the ToolError's code and message. */
const caught = (call: string) =>
  `try { return { ok: await ${call} }; } catch (e) { return { code: (e as ToolError).code, message: (e as ToolError).message }; }`;

/** The output of a run that completed with a caught ToolError. */
function failure(run: { readonly status: string; readonly output?: unknown }): { code: string; message: string } {
  assert.equal(run.status, "completed", JSON.stringify(run).slice(0, 500));
  const output = run.output as { code?: string; message?: string };
  assert.equal(typeof output.code, "string", JSON.stringify(output).slice(0, 500));
  return { code: output.code!, message: output.message ?? "" };
}

describe("a hostile MCP server's tool list", () => {
  it("a name listed twice with different definitions, and names that cannot be declared safely, are left out with a warning naming each; the rest is pinned", async () => {
    for (const name of UNSAFE_NAMES) {
      const naming = registered.warnings.filter((w) => w.startsWith(`mcpServers.h: the server's tool ${JSON.stringify(name)} `));
      assert.equal(naming.length, 1, `one warning for ${JSON.stringify(name)}: ${JSON.stringify(registered.warnings)}`);
      assert.match(naming[0]!, /it was left out\.$/);
    }
    assert.ok(
      registered.warnings.some((w) =>
        w.startsWith(`mcpServers.h: the server's tool "${DIFFERING_DUPLICATE}" is listed 2 times with different definitions; it was left out`),
      ),
      JSON.stringify(registered.warnings),
    );
    assert.ok(!registered.warnings.some((w) => w.includes(`"${SAME_DUPLICATE}"`)), "a tool listed twice the same way is no problem");
    // Its definition has no JSON form today; a canonical form for lone surrogates would pin it instead.
    assert.ok(
      registered.tools.includes(LONE_SURROGATE_TOOL) ||
        registered.warnings.some((w) => w.includes(`tool "${LONE_SURROGATE_TOOL}" has a definition with no JSON form`)),
    );
    const pinned = registered.tools.filter((name) => name !== LONE_SURROGATE_TOOL);
    assert.deepEqual(pinned, ["deep", "echo", "garbage", "hang", "huge", "huge_error", "proto_keys", SAME_DUPLICATE, "surrogate", "weird_content"]);
    // Every line the model reads is a whole declaration: no name broke out of its line.
    for (const line of registered.prompt.split("\n"))
      assert.match(line, /^(import \{ h \} from "tapedeck:tools";|h\.[a-z_]+\(|sleep\(|signal<T>\(|webhook\()/, line);
    await hostile.assertStillServing();
  });

  it("a script cannot reach a tool that was left out: it is refused before it runs", async () => {
    const started = await start(
      `return [await h.${DIFFERING_DUPLICATE}({}), await (h as unknown as Record<string, (a: object) => Promise<unknown>>)["then"]!({})];`,
    );
    assert.equal(started.kind, "refused", JSON.stringify(started));
    if (started.kind === "refused")
      assert.match(started.diagnostics.map((d) => d.message).join("\n"), new RegExp(`Property '${DIFFERING_DUPLICATE}' does not exist`));
    assert.equal(mcp.calls(DIFFERING_DUPLICATE), 0);
    await hostile.assertStillServing();
  });
});

describe("a hostile MCP server's results", () => {
  it("a result past the size limit fails with result_too_large", async () => {
    const { code, message } = failure(await attack(caught("h.huge({})")));
    assert.equal(code, "result_too_large");
    assert.match(message, new RegExp(`^The result is ${HUGE_BYTES + 2} bytes; one recorded value may be at most \\d+ bytes\\.`));
    await hostile.assertStillServing();
  });

  it("an error text past any use is cut, saying how much was left out", async () => {
    const { code, message } = failure(await attack(caught("h.huge_error({})")));
    assert.equal(code, "tool_error");
    assert.ok(message.length < 20_000, `${message.length} characters`);
    assert.match(message, /^e+… \[\d+ more characters not kept\]$/);
    await hostile.assertStillServing();
  });

  it("content blocks no client knows: a tool_error that says the answer could not be read", async () => {
    const { code, message } = failure(await attack(caught("h.weird_content({})")));
    assert.equal(code, "tool_error");
    assert.equal(
      message,
      "h.weird_content: its MCP server answered something that is not a tools/call result (content of an unknown kind, or fields of the wrong type), so the answer could not be read; the tool may have run. Its owner must fix the server.",
    );
    await hostile.assertStillServing();
  });

  it("bytes that are not JSON-RPC: the call is an interruption, sent again up to its limit, then fails saying what came back", async () => {
    const { code, message } = failure(await attack(caught("h.garbage({})")));
    assert.equal(code, "too_many_attempts");
    assert.match(message, /^The call was interrupted 5 times \(last: h answered something that is not JSON-RPC: /);
    assert.equal(mcp.calls("garbage"), 5);
    await hostile.assertStillServing();
  });

  it("a server that never answers: the attempt times out, and meanwhile another tenant's run completes", async () => {
    const started = await start(caught("h.hang({})"));
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    await mcp.called("hang");
    await hostile.assertStillServing();
    const { code, message } = failure(await hostile.attacker.runs.get(started.run.id, { wait: 30 }));
    assert.equal(code, "timeout");
    assert.match(message, /^h\.hang did not answer within 2000 ms \(attempt 1\)/);
    await hostile.assertStillServing();
  });

  it("keys that are Object.prototype's members come back as data, and pollute nothing", async () => {
    const run = await attack(
      `const r = (await h.proto_keys({})) as Record<string, unknown>; return { keys: Object.keys(r).sort(), constructor: r.constructor, fresh: ({} as Record<string, unknown>).polluted ?? null };`,
    );
    assert.equal(run.status, "completed", JSON.stringify(run));
    // The SDK's result validation assigns keys, so `__proto__` does not survive it; the rest are plain data.
    assert.deepEqual(run.output, { keys: ["constructor", "hasOwnProperty", "toString"], constructor: 1, fresh: null });
    await hostile.assertStillServing();
  });

  // Last: these two once took the server down (or left the run running), which would fail every
  // test after them; values are now bounded in depth where they cross into the engine.
  it("a result nested 200,000 levels deep: a clear failure", async () => {
    const { code } = failure(await attack(caught("h.deep({})")));
    assert.ok(["result_too_large", "tool_error", "invalid_result"].includes(code), code);
    await hostile.assertStillServing();
  });

  it("a result holding lone surrogates: the run ends (it does not crash the server)", async () => {
    const run = await attack(caught("h.surrogate({})"));
    assert.ok(run.status === "completed" || run.status === "failed");
    await hostile.assertStillServing();
  });
});
