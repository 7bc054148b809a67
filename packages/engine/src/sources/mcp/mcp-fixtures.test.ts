import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { PolicySpec, ToolsetSpec } from "@tapedeck/protocol";
import { randomUUID } from "node:crypto";
import { McpToolSource } from "./mcp-tool-source.js";
import { findSecrets } from "../../test-support/leak-scan.js";
import type { ToolCallRequest, ToolOutcome } from "../tool-source.js";
import { STDIO_MAIN } from "../../test-support/mcp/fixture-clients.js";
import { startHttpFixture } from "../../test-support/mcp/http-fixture.js";
import { runScript, testEngine, testSandboxes } from "../../test-support/engines.js";

/**
 * Tapedeck's MCP layer against our own fixture servers (official SDK, stdio and Streamable HTTP
 * on loopback): what scripts get, what servers receive, and how faults end.
 */
after(() => testSandboxes().close());

const stdio = (...flags: string[]) => ({ command: process.execPath, args: [STDIO_MAIN, ...flags] });

/** Loses the first answer of each call after the server has acted on it: the call is interrupted. */
class LoseFirstAnswer extends McpToolSource {
  override async call(request: ToolCallRequest): Promise<ToolOutcome> {
    const outcome = await super.call(request);
    return request.attempt === 1 ? { kind: "interrupted", reason: "the answer was lost" } : outcome;
  }
}

async function run(server: object, source: string, options: { policies?: Record<string, PolicySpec>; loseFirst?: boolean; input?: unknown } = {}) {
  const t = await testEngine({ mcp: options.loseFirst ? new LoseFirstAnswer() : new McpToolSource() });
  try {
    const spec = { mcpServers: { fx: server }, ...(options.policies ? { policies: options.policies } : {}) } as ToolsetSpec;
    const { runId, end } = await runScript(t.engine, spec, `import { fx, ToolError } from "tapedeck:tools";\n${source}`, options.input);
    return { runId, end, journal: await t.engine.journal(runId) };
  } finally {
    await t.cleanup();
  }
}

const output = (end: { status: string }) => (end as { output?: unknown }).output;

describe("MCP calls against fixture servers", () => {
  it("sends the idempotency key and traceparent in _meta, the same on every attempt (HTTP)", async () => {
    const fixture = await startHttpFixture();
    try {
      const { runId, end } = await run({ url: fixture.url }, `export default async () => fx.effects({ op: "charge" });`, { loseFirst: true });
      assert.equal(end.status, "completed");
      const log = fixture.state.effectsLog();
      assert.equal(log.count, 1, "the effect happened once: the server recognised the key");
      assert.equal(log.keys.length, 1);
      const [entry] = log.keys;
      assert.equal(entry!.key, `${runId}/1`);
      assert.equal(entry!.attempts, 2);
      assert.equal(entry!.traceparents.length, 2);
      assert.match(entry!.traceparents[0]!, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      assert.equal(entry!.traceparents[0], entry!.traceparents[1]);
      assert.deepEqual((output(end) as { attemptsForKey: number }).attemptsForKey, 2);
    } finally {
      await fixture.close();
    }
  });

  it("maps results: structured content, a text block, images kept, lossy parts described; isError is a ToolError", async () => {
    const { end } = await run(
      stdio(),
      `export default async () => {
         let failed = "";
         try { await fx.fail({ message: "no such repo" }); } catch (e) { failed = (e as ToolError).code + ": " + (e as ToolError).message; }
         return { echo: await fx.echo({ text: "hi" }), plain: await fx.echo_plain({ text: "hi" }), image: await fx.image(), mixed: await fx.mixed(), failed };
       };`,
    );
    const out = output(end) as Record<string, unknown>;
    assert.deepEqual(out.echo, { text: "hi" });
    assert.equal(out.plain, "hi");
    assert.ok((out.image as { content: { type?: string; mimeType?: string }[] }).content.some((p) => p.type === "image" && p.mimeType === "image/png"));
    const mixed = out.mixed as { content: unknown[]; lossy: boolean };
    assert.equal(mixed.lossy, true);
    assert.ok(mixed.content.some((p) => typeof p === "string" && /^\[audio /.test(p)));
    assert.ok(mixed.content.some((p) => typeof p === "string" && /^\[resource link /.test(p)));
    assert.equal(out.failed, "tool_error: no such repo");
  });

  it("a call that never answers times out per attempt; the run goes on", async () => {
    const { end } = await run(
      stdio(),
      `export default async () => { let code = ""; try { await fx.hang(); } catch (e) { code = (e as ToolError).code; } return { code, after: await fx.echo({ text: "still here" }) }; };`,
      { policies: { "fx.hang": { timeout: "150ms" } } },
    );
    assert.deepEqual(output(end), { code: "timeout", after: { text: "still here" } });
  });

  it("a server that dies mid-call interrupts it: at_most_once → outcomeUnknown; retry reconnects and re-sends", async () => {
    const once = await run(stdio(), `export default async () => { try { await fx.drop({}); } catch (e) { return (e as ToolError).code; } };`, {
      policies: { "fx.drop": { onInterruption: "at_most_once" } },
    });
    assert.equal(output(once.end), "outcomeUnknown");
    const retried = await run(stdio(), `export default async () => { try { await fx.drop({}); } catch (e) { return (e as ToolError).code; } };`);
    assert.equal(output(retried.end), "too_many_attempts");
    assert.equal(retried.journal.filter((e) => e.kind === "call.attempt").length, 4, "five attempts, each on a new server process");
  });

  it("a result over the recorded-value limit is refused with result_too_large (HTTP, 50 MiB)", async () => {
    const fixture = await startHttpFixture();
    try {
      const { end } = await run(
        { url: fixture.url },
        `export default async () => { try { await fx.huge({ mb: 50 }); } catch (e) { return (e as ToolError).code; } };`,
      );
      assert.equal(output(end), "result_too_large");
    } finally {
      await fixture.close();
    }
  });

  it("pins every page of a paginated tools/list, keeps non-identifier names, and applies the prefix", async () => {
    const mcp = new McpToolSource();
    const t = await testEngine({ mcp });
    try {
      const { toolset, declarations } = await t.engine.registerToolset({
        mcpServers: { fx: { ...stdio("--many", "30", "--page", "7", "--names", "list-items"), prefix: "p_" } },
      });
      const names = toolset.tools.map((tool) => tool.name);
      assert.ok(names.includes("p_op_29") && names.includes("p_op_0") && names.includes("p_echo"));
      assert.ok(names.includes("p_list-items"));
      assert.match(declarations.typescript, /"p_list-items"\(args: /);
      const { end } = await runScript(
        t.engine,
        { mcpServers: { fx: { ...stdio("--many", "30", "--page", "7", "--names", "list-items"), prefix: "p_" } } },
        `import { fx } from "tapedeck:tools";\nexport default async () => fx["p_list-items"]({ text: "quoted" });`,
      );
      assert.equal(end.status, "completed", JSON.stringify(end));
    } finally {
      await t.cleanup();
    }
  });
});

describe("MCP override at registration", () => {
  it("drops a tool, rewrites another's policy, keeps the rest; the server still gets the original name", async () => {
    const mcp = new McpToolSource();
    const t = await testEngine({ mcp });
    try {
      const spec = { mcpServers: { fx: stdio() } };
      const plain = await t.engine.registerToolset(spec);
      const registered = await t.engine.registerToolset(spec, {
        override: {
          fx: (tool, info) => {
            if (info.name === "drop") return false;
            if (info.name === "echo") return { ...tool, description: "Echo, overridden.", policy: { ...tool.policy, onInterruption: "at_most_once" } };
            return undefined;
          },
        },
      });
      assert.notEqual(registered.id, plain.id, "what an override changes is part of the content address");
      const names = registered.toolset.tools.map((tool) => tool.name);
      assert.ok(!names.includes("drop") && names.includes("echo") && names.includes("fail"));
      const echo = registered.toolset.tools.find((tool) => tool.name === "echo")!;
      assert.equal(echo.policy.onInterruption, "at_most_once");
      assert.equal(echo.remote?.name, "echo");
      assert.match(registered.declarations.typescript, /Echo, overridden\./);
    } finally {
      await t.cleanup();
    }
  });
});

describe("misbehaving MCP servers end with clear ToolErrors, and the engine stays up", () => {
  // Only never-answer depends on the timeout; the others must end on their own, well before a
  // generous timeout (each attempt starts a new server process, slow on a loaded machine).
  for (const [mode, codes, timeout] of [
    ["malformed", ["too_many_attempts"], "60s"],
    ["exit-mid-call", ["too_many_attempts"], "60s"],
    ["never-answer", ["timeout"], "300ms"],
  ] as const) {
    it(`${mode}`, async () => {
      const { end, journal } = await run(
        stdio("--misbehave", mode),
        `export default async () => { try { await fx.echo({ text: "x" }); return "answered"; } catch (e) { return { code: (e as ToolError).code, message: (e as ToolError).message }; } };`,
        { policies: { "fx.*": { timeout } } },
      );
      const out = output(end) as { code: string; message: string };
      assert.ok((codes as readonly string[]).includes(out.code), `${mode}: ${JSON.stringify(out)}`);
      assert.ok(out.message.length > 20);
      if (mode === "malformed") assert.match(out.message, /not JSON-RPC/);
      assert.equal(journal.at(-1)?.kind, "run.completed");
    });
  }
});

describe("MCP auth for expiring tokens", () => {
  it("reads the token before every request and refreshes once on a 401; the toolset stores no credential", async () => {
    const first = `tok-${randomUUID()}`;
    const second = `tok-${randomUUID()}`;
    let valid = first;
    let current = first;
    let refreshes = 0;
    const fixture = await startHttpFixture({ requireBearer: () => valid });
    const mcp = new McpToolSource({
      auth: {
        [fixture.url]: {
          token: () => current,
          onUnauthorized: () => {
            refreshes++;
            current = valid;
          },
        },
      },
    });
    const t = await testEngine({ mcp });
    try {
      const spec = { mcpServers: { fx: { url: fixture.url } } };
      const { toolset } = await t.engine.registerToolset(spec);
      assert.ok(!JSON.stringify(toolset).includes(first));
      valid = second; // the server rotates: the next request gets a 401, then a refresh
      const { end } = await runScript(t.engine, spec, `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "authorized" });`);
      assert.deepEqual(end, { status: "completed", output: { text: "authorized" } });
      assert.equal(refreshes, 1);
      assert.deepEqual(await findSecrets(t.engine, t.dataDir, [first, second]), []);
      // Control: the scan does reach the data folder and the journal (the output is in both).
      assert.ok((await findSecrets(t.engine, t.dataDir, ["authorized"])).some((where) => where.includes("in run")));
    } finally {
      await t.cleanup();
      await fixture.close();
    }
  });

  it("a header that references the environment is expanded when connecting, and the secret is stored nowhere", async () => {
    const secret = `tok-${randomUUID()}`;
    process.env.TAPEDECK_TEST_MCP_TOKEN = secret;
    const fixture = await startHttpFixture({ requireBearer: () => secret });
    const t = await testEngine({ mcp: new McpToolSource() });
    try {
      const spec = { mcpServers: { fx: { url: fixture.url, headers: { Authorization: "Bearer ${TAPEDECK_TEST_MCP_TOKEN}" } } } };
      const { end } = await runScript(t.engine, spec, `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "with a header" });`);
      assert.deepEqual(end, { status: "completed", output: { text: "with a header" } });
      assert.deepEqual(await findSecrets(t.engine, t.dataDir, [secret]), []);
    } finally {
      delete process.env.TAPEDECK_TEST_MCP_TOKEN;
      await t.cleanup();
      await fixture.close();
    }
  });
});

describe("oversized results over stdio", () => {
  it("a result past the stdio transport's buffer is refused as result_too_large, not retried", async () => {
    const { end, journal } = await run(
      stdio(),
      `export default async () => { try { await fx.huge({ mb: 11 }); } catch (e) { return (e as ToolError).code; } };`,
    );
    assert.equal(output(end), "result_too_large");
    assert.equal(journal.filter((e) => e.kind === "call.attempt").length, 0);
  });
});

describe("a Streamable HTTP response cut mid-call", () => {
  it("is an interruption at once (not a timeout): at_most_once → outcomeUnknown; retry reconnects each time", async () => {
    const fixture = await startHttpFixture();
    try {
      const source = `export default async () => { try { await fx.drop({ stage: "mid-stream" }); } catch (e) { return (e as ToolError).code; } };`;
      const once = await run({ url: fixture.url }, source, { policies: { "fx.drop": { onInterruption: "at_most_once", timeout: "60s" } } });
      assert.equal(output(once.end), "outcomeUnknown");
      const sessionsBefore = fixture.sessions();
      const retried = await run({ url: fixture.url }, source, { policies: { "fx.drop": { timeout: "60s" } } });
      assert.equal(output(retried.end), "too_many_attempts");
      assert.ok(fixture.sessions() >= sessionsBefore + 5, "every attempt after a cut starts a new session");
    } finally {
      await fixture.close();
    }
  });
});
