import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";
import { startModelFake } from "../test-support/model-fakes/index.js";

/**
 * examples/direct/anthropic.ts, run as a program (tsx) against a real `tapedeck serve`, the
 * reference MCP memory server and a loopback fake of Anthropic's API driven by the official
 * client: a read goes at once, a write waits for the answer typed at the terminal (here written
 * to the program's stdin once it asks), and a refused delete comes back to the model as such.
 */
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const TSX = `${REPO}node_modules/tsx/dist/cli.mjs`;

let server: ServeChild;
let folder: string;

before(async () => {
  server = await startServeChild();
  folder = mkdtempSync(join(tmpdir(), "tapedeck-direct-example-"));
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
  rmSync(folder, { recursive: true, force: true });
});

describe("examples/direct", () => {
  it("runs the Anthropic harness: reads at once, a write after 'y' at the terminal, a delete refused with 'n'", async () => {
    const ada = { name: "Ada Lovelace", entityType: "person", observations: ["wrote the first program"] };
    const fake = await startModelFake("anthropic", [
      {
        toolCalls: [
          { id: "toolu_read", name: "graph_read_graph", input: {} },
          { id: "toolu_create", name: "graph_create_entities", input: { entities: [ada] } },
        ],
      },
      (request) => {
        const [read, create] = request.toolResults;
        assert.equal(read?.isError, undefined, read?.content);
        assert.equal(create?.isError, undefined, create?.content);
        assert.match(create!.content, /Ada Lovelace/);
        return { toolCalls: [{ id: "toolu_delete", name: "graph_delete_entities", input: { entityNames: ["Ada Lovelace"] } }] };
      },
      (request) => {
        const deleted = request.toolResults.at(-1);
        assert.equal(deleted?.isError, true);
        assert.match(deleted.content, /A human rejected the call to "graph_delete_entities": the user said no\. Nothing was sent\./);
        return { text: "Remembered Ada; kept her." };
      },
    ]);
    try {
      const child = spawn(process.execPath, [TSX, "examples/direct/anthropic.ts", "Remember Ada"], {
        cwd: REPO,
        stdio: ["pipe", "pipe", "pipe"],
        env: {
          ...process.env,
          ANTHROPIC_BASE_URL: fake.baseUrl,
          ANTHROPIC_API_KEY: "test-key",
          TAPEDECK_URL: server.url,
          TAPEDECK_API_KEY: server.adminKey!,
          TAPEDECK_SESSION: "example-conv",
          MEMORY_FILE: join(folder, "memory.jsonl"),
        },
      });
      let stdout = "";
      let stderr = "";
      const answers = ["y", "n"];
      const prompts: string[] = [];
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        // Answer each question once it is asked (readline drops lines typed before a question).
        for (const prompt of stderr.match(/[^\n]*Approve\? \[y\/N\] /g)?.slice(prompts.length) ?? []) {
          prompts.push(prompt);
          child.stdin.write(`${answers.shift() ?? "n"}\n`);
        }
      });
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      assert.equal(code, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`);
      assert.equal(stdout.trim(), "Remembered Ada; kept her.");
      assert.equal(prompts.length, 2, stderr);
      assert.match(prompts[1]!, /^Delete from memory: \["Ada Lovelace"\]/);
      await fake.done;
    } finally {
      await fake.close();
    }
  });
});
