import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli } from "./cli.js";
import type { Output } from "./print.js";

/** `tapedeck run` against a reference MCP server from the npm registry, end to end. */
const MEMORY = fileURLToPath(new URL("../../../../node_modules/@modelcontextprotocol/server-memory/dist/index.js", import.meta.url));

function capture(): Output & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
}

describe("tapedeck run with an MCP server", () => {
  it("runs a script against server-memory over stdio, then shows the journal of its calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-cli-mcp-"));
    try {
      const toolset = join(dir, "toolset.json");
      writeFileSync(
        toolset,
        JSON.stringify({ mcpServers: { graph: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "m.jsonl") } } } }),
      );
      const script = join(dir, "script.ts");
      writeFileSync(
        script,
        `import { graph } from "tapedeck:tools";
export default async () => {
  await graph.create_entities({ entities: [{ name: "Grace", entityType: "person", observations: ["COBOL"] }] });
  await graph.create_relations({ relations: [{ from: "Grace", to: "Grace", relationType: "inspires" }] });
  const read = await graph.read_graph();
  return { entities: read.entities.length, relations: read.relations.map((r) => r.relationType) };
};`,
      );
      const io = capture();
      const code = await cli(["run", script, "--toolset", toolset, "--data", join(dir, "data")], io);
      assert.equal(code, 0, io.err.join("\n"));
      assert.deepEqual(JSON.parse(io.out.join("\n")), { entities: 1, relations: ["inspires"] });
      const runs = capture();
      await cli(["runs", "--data", join(dir, "data")], runs);
      const runId = runs.out[0]!.split(" ")[0]!;
      const shown = capture();
      await cli(["show", runId, "--data", join(dir, "data")], shown);
      assert.equal(shown.out.filter((l) => l.includes("call.completed")).length, 3);
      assert.ok(shown.out.some((l) => l.includes("#2 graph.create_relations(")));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a tool the server annotates destructiveHint waits for approval: nothing is sent until it is approved", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-cli-mcp-"));
    try {
      const memoryFile = join(dir, "m.jsonl");
      const toolset = join(dir, "toolset.json");
      writeFileSync(toolset, JSON.stringify({ mcpServers: { graph: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } } } }));
      const script = join(dir, "script.ts");
      writeFileSync(
        script,
        `import { graph } from "tapedeck:tools";
export default async () => {
  await graph.create_entities({ entities: [{ name: "Grace", entityType: "person", observations: ["COBOL"] }] });
  await graph.delete_entities({ entityNames: ["Grace"] });
  return (await graph.read_graph()).entities.length;
};`,
      );
      const data = join(dir, "data");
      const parked = capture();
      assert.equal(await cli(["run", script, "--toolset", toolset, "--detach", "--data", data], parked), 0, parked.err.join("\n"));
      const runId = parked.out[0]!;
      assert.match(parked.err.join("\n"), new RegExp(`run ${runId} waiting: approval of #2 graph\\.delete_entities`));
      assert.match(readFileSync(memoryFile, "utf8"), /Grace/, "not deleted: the call was not sent");
      const approved = capture();
      assert.equal(await cli(["approve", `${runId}/2`, "--data", data], approved), 0, approved.err.join("\n"));
      assert.deepEqual(approved.out, ["0"]);
      assert.doesNotMatch(readFileSync(memoryFile, "utf8"), /Grace/, "sent once approved");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
