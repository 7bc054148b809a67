import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { startEchoMcpServer } from "../http/test-support/echo-mcp-server.js";
import { collect, killHard, stderrLine, withCliTest } from "./test-support/child-cli.js";

/**
 * A tool's schema changes while a run sleeps, across processes: `tapedeck run` parks on a
 * signal and is killed; the server is redeployed with an `echo` that requires an argument the
 * call lacks; `tapedeck signal` wakes the run in a new process, which reads the server's tools
 * on its first connection and parks the call (`tool.schema_changed`) instead of sending it.
 */

describe("a tool schema change during a wait, seen from a new process", () => {
  it("the run woken by `tapedeck signal` in a new process parks the call whose arguments no longer fit, and does not send it", async () => {
    let redeployed = false;
    const server = await startEchoMcpServer(() => redeployed);
    try {
      await withCliTest("tapedeck-schema-", async ({ dir, spawn }) => {
        const data = join(dir, "data");
        writeFileSync(join(dir, "toolset.json"), JSON.stringify({ mcpServers: { fx: { url: server.url } } }));
        writeFileSync(
          join(dir, "script.ts"),
          `import { fx } from "tapedeck:tools";\nexport default async () => { await signal("go"); return fx.echo({ text: "x" }); };`,
        );
        const first = spawn(["run", join(dir, "script.ts"), "--toolset", join(dir, "toolset.json"), "--data", data]);
        const {
          match: [, runId],
        } = await stderrLine(first, /^run (run_\w+) waiting: signal "go"/);
        assert.equal(await killHard(first), "SIGKILL");

        redeployed = true;
        const woken = spawn(["signal", runId!, "go", "--data", data]);
        const { line } = await stderrLine(woken, /^run run_\w+ waiting: decision on parked #2 fx\.echo/);
        assert.match(line, /\(tool\.schema_changed: The input schema of fx\.echo changed on its MCP server and the call's arguments no longer fit it: .*lang/);
        const done = await collect(woken);
        assert.equal(done.code, 0, done.stderr);
        assert.equal(server.calls(), 0, "the call was not sent");
      });
    } finally {
      await server.close();
    }
  });
});
