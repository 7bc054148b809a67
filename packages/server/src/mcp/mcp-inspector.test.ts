import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { memoryWorkspace, mcpArgs } from "./test-support/mcp-child.js";

/**
 * The MCP Inspector (`@modelcontextprotocol/inspector`, from the npm registry, a client no one here
 * wrote) in CLI mode against `tapedeck mcp`: it lists the tools and calls them. Pinned at 0.15.0,
 * the last release that runs on Node 20 (0.16.0 on declare `engines.node` >= 22.7.5).
 */
const INSPECTOR = fileURLToPath(new URL("../../../../node_modules/@modelcontextprotocol/inspector/cli/build/cli.js", import.meta.url));

async function inspect(args: readonly string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, [INSPECTOR, "--cli", process.execPath, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as unknown;
}

describe("the MCP Inspector's CLI against tapedeck mcp", () => {
  it("lists the agent tools and runs a script against the toolset's MCP server", async () => {
    const ws = memoryWorkspace();
    try {
      const server = mcpArgs(ws);
      const listed = (await inspect([...server, "--method", "tools/list"])) as { tools: { name: string; annotations?: { readOnlyHint?: boolean } }[] };
      assert.ok(listed.tools.some((t) => t.name === "run_script"));
      assert.equal(listed.tools.find((t) => t.name === "get_run")?.annotations?.readOnlyHint, true);

      const code = `import { graph } from "tapedeck:tools"; export default async () => { await graph.create_entities({ entities: [{ name: "Kay", entityType: "person", observations: [] }] }); return (await graph.read_graph()).entities.map((e) => e.name); };`;
      const ran = (await inspect([...server, "--method", "tools/call", "--tool-name", "run_script", "--tool-arg", `code=${code}`])) as {
        content: { text: string }[];
        isError?: boolean;
      };
      assert.equal(ran.isError, false, ran.content[0]!.text);
      assert.match(ran.content[0]!.text, /completed/);
      assert.match(ran.content[0]!.text, /"Kay"/);
    } finally {
      ws.cleanup();
    }
  });
});
