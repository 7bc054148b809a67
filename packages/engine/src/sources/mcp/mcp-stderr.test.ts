import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EngineEvent } from "../../engine.js";
import { EngineError } from "../../errors.js";
import { runScript, testEngine, testSandboxes } from "../../test-support/engines.js";
import { STDIO_MAIN } from "../../test-support/mcp/fixture-clients.js";
import { STDERR_NOISE_LINES } from "../../test-support/mcp/misbehaviour.js";
import { McpToolSource } from "./mcp-tool-source.js";
import { STDERR_LINES } from "./stderr-tail.js";

/**
 * A stdio MCP server that fails says why in its own words: its last stderr lines are in the
 * registration error, in the call's failure, and in what the engine reports (the server logs
 * engine errors), with the secrets Tapedeck gave it redacted.
 */
after(() => testSandboxes().close());

const MODULES = fileURLToPath(new URL("../../../../../node_modules/@modelcontextprotocol/", import.meta.url));
const SECRET = "postgresql://admin:hunter2-stderr-secret@db.internal:5432/app";

describe("a stdio MCP server's stderr", () => {
  it("the reference server-filesystem pointed at a missing directory: the registration error and the engine's report carry its message, not only 'Connection closed'", async () => {
    const t = await testEngine();
    const events: EngineEvent[] = [];
    t.engine.on((event) => events.push(event));
    const missing = join(t.dataDir, "no-such-directory");
    try {
      const spec = { mcpServers: { fs: { command: process.execPath, args: [join(MODULES, "server-filesystem", "dist/index.js"), missing] } } };
      const error = await t.engine.registerToolset(spec).then(
        () => assert.fail("registered"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof EngineError && error.code === "invalid_toolset", String(error));
      assert.match(
        error.message,
        /^mcpServers\.fs: cannot list the server's tools: .*Connection closed\. The server's last stderr lines:\n {2}Warning: Cannot access directory .*no-such-directory, skipping\n {2}Error: None of the specified directories are accessible\. Check the server/,
      );
      const reported = events.flatMap((e) => (e.type === "engine.error" && e.error instanceof Error ? [e.error.message] : []));
      assert.equal(reported.length, 1, JSON.stringify(reported));
      assert.match(
        reported[0]!,
        /^MCP server fs \(stdio\) stopped\. The server's last stderr lines:\n.*\n {2}Error: None of the specified directories are accessible$/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it("a server that writes to stderr and exits during a call: the call's failure and the log carry its last lines (bounded), secrets it was given redacted", async () => {
    process.env.TAPEDECK_TEST_STDERR_DB_URL = SECRET;
    const logged: string[] = [];
    const t = await testEngine({ mcp: new McpToolSource({ log: (message) => logged.push(message) }) });
    try {
      const spec = {
        mcpServers: {
          fx: { command: process.execPath, args: [STDIO_MAIN, "--misbehave", "stderr-exit"], env: { FIXTURE_DATABASE_URL: "${TAPEDECK_TEST_STDERR_DB_URL}" } },
        },
        policies: { "fx.echo": { onInterruption: "at_most_once" as const } },
      };
      const { runId, end } = await runScript(
        t.engine,
        spec,
        `import { fx, ToolError } from "tapedeck:tools";
        export default async () => { try { return await fx.echo({ text: "x" }); } catch (e) { return (e as ToolError).code + ": " + (e as ToolError).message; } };`,
      );
      assert.equal(end.status, "completed");
      const message = end.status === "completed" && typeof end.output === "string" ? end.output : "";
      assert.match(message, /^outcomeUnknown: The call was interrupted \(the connection to fx closed during the call\. The server's last stderr lines:\n/);
      assert.match(message, /\n {2}fixture: cannot reach the database at \[redacted: secret\]; giving up\)/);
      const kept = message.split("\n").filter((line) => line.startsWith("  "));
      assert.equal(kept.length, STDERR_LINES, "only the last lines are kept");
      assert.equal(kept[0], `  noise ${STDERR_NOISE_LINES - STDERR_LINES + 1}`);
      assert.ok(!message.includes("hunter2"), "the secret the server was given is redacted");
      assert.ok(!JSON.stringify(await t.engine.journal(runId)).includes("hunter2"), "the journal holds no secret");
      assert.equal(logged.length, 1, JSON.stringify(logged));
      assert.match(
        logged[0]!,
        /^MCP server fx \(stdio\) stopped\. The server's last stderr lines:\n(.*\n){11} {2}fixture: cannot reach the database at \[redacted: secret\]; giving up$/,
      );
    } finally {
      delete process.env.TAPEDECK_TEST_STDERR_DB_URL;
      await t.cleanup();
    }
  });
});
