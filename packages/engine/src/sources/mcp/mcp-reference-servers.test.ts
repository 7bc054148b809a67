import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EngineError } from "../../errors.js";
import { runScript, testEngine, testSandboxes } from "../../test-support/engines.js";

/**
 * The reference MCP servers from the npm registry, over stdio, through the engine: pinning,
 * declarations, calls, results and errors, exactly as a script sees them.
 */
after(() => testSandboxes().close());

const MODULES = fileURLToPath(new URL("../../../../../node_modules/@modelcontextprotocol/", import.meta.url));
const server = (name: string, ...args: string[]) => ({ command: process.execPath, args: [join(MODULES, name, "dist/index.js"), ...args] });

describe("reference MCP servers over stdio", () => {
  it("server-memory: pins its 9 tools (same id twice), and a script calls them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-memory-"));
    const t = await testEngine();
    try {
      const spec = { mcpServers: { graph: { ...server("server-memory"), env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } } } };
      const first = await t.engine.registerToolset(spec);
      const second = await t.engine.registerToolset(spec);
      assert.equal(first.id, second.id);
      assert.match(first.id, /^ts_[0-9a-f]{64}$/);
      assert.equal(first.toolset.tools.length, 9);
      assert.ok(first.toolset.tools.every((tool) => tool.source === "mcp" && tool.outputSchema !== undefined));
      assert.match(first.declarations.prompt, /^graph\.search_nodes\(\{ query: string \}\) → \{ entities: /m);
      const { end } = await runScript(
        t.engine,
        spec,
        `import { graph } from "tapedeck:tools";
         export default async () => {
           await graph.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["first program"] }] });
           const found = await graph.search_nodes({ query: "Ada" });
           return found.entities.map((e) => e.name);
         };`,
      );
      assert.deepEqual(end, { status: "completed", output: ["Ada"] });
      assert.match(readFileSync(join(dir, "memory.jsonl"), "utf8"), /first program/);
    } finally {
      await t.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("server-filesystem: results come back; its errors are ToolErrors with the server's text", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-fs-"));
    writeFileSync(join(dir, "note.txt"), "hello from disk");
    const t = await testEngine();
    try {
      const { end } = await runScript(
        t.engine,
        { mcpServers: { fs: server("server-filesystem", dir) } },
        `import { fs, ToolError } from "tapedeck:tools";
         export default async (input: { dir: string }) => {
           const text = await fs.read_text_file({ path: input.dir + "/note.txt" });
           let denied = "";
           try { await fs.read_text_file({ path: "/etc/hostname" }); } catch (e) { denied = (e as ToolError).code + ": " + (e as ToolError).message; }
           return { text, denied };
         };`,
        { dir },
      );
      assert.equal(end.status, "completed");
      const output = (end as unknown as { output: { text: { content: string }; denied: string } }).output;
      assert.equal(output.text.content, "hello from disk");
      assert.match(output.denied, /^tool_error: .*(denied|outside|not allowed)/i);
    } finally {
      await t.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("server-everything: quoted tool names, structured content, images kept, annotations as defaults", async () => {
    const t = await testEngine();
    try {
      const spec = { mcpServers: { everything: server("server-everything", "stdio") } };
      const { toolset, declarations } = await t.engine.registerToolset(spec);
      assert.match(declarations.typescript, /"get-sum"\(args: \{/);
      const annotated = toolset.tools.filter((tool) => tool.annotations !== undefined);
      assert.ok(annotated.length > 0);
      for (const tool of toolset.tools) {
        const destructive = tool.annotations?.destructiveHint === true;
        assert.equal(tool.policy.approval, destructive, `${tool.name}: approval follows destructiveHint`);
        assert.equal(tool.risk, tool.annotations?.readOnlyHint === true ? "low" : destructive ? "high" : "medium");
      }
      const { end } = await runScript(
        t.engine,
        spec,
        `import { everything } from "tapedeck:tools";
         export default async () => ({
           echo: await everything.echo({ message: "hi" }),
           sum: await everything["get-sum"]({ a: 2, b: 3 }),
           weather: await everything["get-structured-content"]({ location: "Chicago" }),
           image: await everything["get-tiny-image"](),
         });`,
      );
      assert.equal(end.status, "completed");
      const output = (end as unknown as { output: Record<string, unknown> }).output;
      assert.match(String(output.echo), /hi/);
      assert.match(String(output.sum), /5/);
      assert.equal(typeof (output.weather as { temperature: unknown }).temperature, "number");
      const image = output.image as { content: { type?: string; mimeType?: string }[] };
      assert.ok(image.content.some((part) => part.type === "image" && part.mimeType === "image/png"));
    } finally {
      await t.cleanup();
    }
  });

  it("a server that cannot be listed fails registration, unless it is optional", async () => {
    const t = await testEngine();
    try {
      const broken = { command: process.execPath, args: ["-e", "process.exit(3)"] };
      await assert.rejects(t.engine.registerToolset({ mcpServers: { broken } }), (error: unknown) => {
        assert.ok(error instanceof EngineError);
        assert.match(error.message, /mcpServers\.broken: cannot list the server's tools/);
        return true;
      });
      const registered = await t.engine.registerToolset({ mcpServers: { broken: { ...broken, optional: true } } });
      assert.equal(registered.toolset.tools.length, 0);
      assert.equal(registered.warnings?.length, 1);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses a literal credential in headers or env, asking for an environment reference", async () => {
    const t = await testEngine();
    try {
      await assert.rejects(
        t.engine.registerToolset({ mcpServers: { gh: { url: "https://example.invalid/mcp", headers: { Authorization: "Bearer abc123" } } } }),
        /mcpServers\.gh\.headers\.Authorization looks like a credential: write it as a reference to Tapedeck's environment.*or, for a server reached by URL, name a vault credential/,
      );
      await assert.rejects(
        t.engine.registerToolset({ mcpServers: { gh: { command: "x", env: { GITHUB_TOKEN: "abc123" } } } }),
        /mcpServers\.gh\.env\.GITHUB_TOKEN looks like a credential/,
      );
    } finally {
      await t.cleanup();
    }
  });
});
