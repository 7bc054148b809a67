import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AGENT_TOOL_NAMES, TapedeckError, type Tapedeck } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * The built-in tool library through a real `tapedeck serve` and the SDK: a toolset enabling
 * groups is registered over the API, a run calls them, the journal records each call, and the
 * namespace's workspace lives under the server's data folder.
 */

let server: ServeChild;
let td: Tapedeck;

before(async () => {
  server = await startServeChild();
  td = server.client(server.adminKey!);
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

void describe("the tool library over the API", () => {
  it("registers library groups, runs files, json and memory from a script, and journals each call", async () => {
    const toolset = await td.toolsets.create({ library: { files: {}, json: {}, memory: {} } });
    const declarations = await td.toolsets.declarations(toolset.id);
    assert.match(declarations.prompt, /^import \{ files, json, memory \} from "tapedeck:tools";/);
    const started = await td.runs.start({
      toolset: toolset.id,
      namespace: "acme",
      source: `import { files, json, memory } from "tapedeck:tools";
        export default async () => {
          await files.write({ path: "todo.md", content: "- bees" });
          await memory.write({ path: "bees.md", content: "The bees live on the roof." });
          const q = await json.query({ data: { a: [{ b: 1 }, { b: 2 }] }, path: "$.a[*].b" });
          return { read: (await files.read({ path: "todo.md" })).content, q, found: (await memory.search({ query: "bees roof" })).results.map((r) => r.path) };
        };`,
    });
    if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
    const done = await td.runs.get(started.run.id, { wait: 30 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    const output = done.output as { read: string; found: string[] };
    assert.deepEqual([output.read, output.found], ["- bees", ["bees.md"]]);
    assert.equal(readFileSync(join(server.dataDir, "library", "workspaces", "n-acme", "todo.md"), "utf8"), "- bees");
    const journal = await td.runs.journal(started.run.id);
    assert.deepEqual(
      journal.entries.filter((e) => e.kind === "call.scheduled").map((e) => (e as { tool: string }).tool),
      ["files.write", "memory.write", "json.query", "files.read", "memory.search"],
    );
  });
});

void describe("protected names over the API", () => {
  it("refuses a host tool group named like an agent tool or a library group, naming the clash", async () => {
    for (const name of [...AGENT_TOOL_NAMES, "files", "shell", "memory", "web", "json", "time", "echo"]) {
      await assert.rejects(td.toolsets.create({ hostTools: { [name]: { x: {} } } }), (error: unknown) => {
        assert.ok(error instanceof TapedeckError && error.code === "invalid_toolset", String(error));
        assert.ok(error.message.includes(`the group name "${name}" is taken`), error.message);
        return true;
      });
    }
  });
});
