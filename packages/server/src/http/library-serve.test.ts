import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AGENT_TOOL_NAMES, defineTool, TapedeckError, toolsetSpec, workerTools, type Tapedeck } from "@tapedeck/sdk";
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

void describe("the one tool contract in defineTool", () => {
  it("a host tool's approval rules and rate limit, written once with defineTool, apply to its calls", async () => {
    const written: string[] = [];
    const save = defineTool<{ path: string }>({
      group: "repo",
      name: "save",
      description: "Saves a file of the repository.",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      policy: {
        approval: {
          kind: "rules",
          rules: [{ action: "ask", when: [{ pointer: "/path", matches: "\\.(rs|toml)$" }], reason: "Writes Rust sources or Cargo manifests" }],
          otherwise: { kind: "never" },
        },
        rateLimit: { perMinute: 2 },
      },
      execute: ({ path }) => {
        written.push(path);
        return { saved: path };
      },
    });
    const toolset = await td.toolsets.create(toolsetSpec([save]));
    const worker = td.worker({ tools: workerTools([save]) }).start();
    try {
      const started = await td.runs.start({
        toolset: toolset.id,
        source: `import { repo, ToolError } from "tapedeck:tools";
          export default async () => {
            const out: unknown[] = [await repo.save({ path: "notes.md" }), await repo.save({ path: "Cargo.toml" })];
            try { await repo.save({ path: "more.md" }); } catch (e) { out.push(e instanceof ToolError ? e.code : String(e)); }
            return out;
          };`,
      });
      if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
      const waiting = await td.runs.get(started.run.id, { wait: 30 });
      assert.equal(waiting.status, "waiting", JSON.stringify(waiting));
      const pending = await td.approvals.pending(started.run.id);
      assert.deepEqual(
        pending.map((p) => [p.seq, p.tool, p.kind === "approval" ? p.reason : undefined]),
        [[2, "repo.save", "Writes Rust sources or Cargo manifests"]],
      );
      assert.deepEqual(written, ["notes.md"]);
      await td.approvals.approve(started.run.id, 2);
      const done = await td.runs.get(started.run.id, { wait: 30 });
      assert.deepEqual([done.status, done.output], ["completed", [{ saved: "notes.md" }, { saved: "Cargo.toml" }, "rate_limited"]]);
      assert.deepEqual(written, ["notes.md", "Cargo.toml"]);
    } finally {
      await worker.stop();
    }
  });
});
