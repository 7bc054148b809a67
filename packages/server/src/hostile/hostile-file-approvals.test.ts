import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * A hostile model against the files tools' approval rules (issue 23 item 7), through a real
 * `tapedeck serve`: it writes the files the rules ask for (env files, shell scripts, CI
 * workflows, git internals) under every spelling the workspace accepts (`run.bash/`, `.env//`,
 * `.env/.`, `./p1/.github/workflows/ci.yml`) and in every patch header form the patch tool
 * reads. Every call waits for approval and nothing is written; the server still serves everyone.
 * (Every spelling against the rules alone: the engine's `files-approval-view.test.ts`.)
 */

let hostile: HostileServer;

before(async () => {
  hostile = await startHostileServer();
});
after(() => hostile.close());

/** The spellings and more: each is written by the workspace to an asked path. */
const ASKED = [".env", "conf/.env", "run.bash", "deploy.sh", ".github/workflows/ci.yml", "p1/.github/workflows/ci.yml", ".git/hooks/pre-commit"];
const spellings = (path: string) => [`${path}/`, `${path}//`, `${path}/.`, `./${path}`, `./${path}/.`, path.replaceAll("/", "//")];

const patches = (path: string) => [
  `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`,
  `--- /dev/null\n+++ ${path}\n@@ -0,0 +1 @@\n+x\n`,
  `--- /dev/null\n+++ b/${path} \n@@ -0,0 +1 @@\n+x\n`,
  `--- /dev/null\n+++ "b/${path}"\n@@ -0,0 +1 @@\n+x\n`,
  `diff --git a/notes.txt b/${path}\nsimilarity index 100%\nrename from notes.txt\nrename to ${path}\n`,
];

void describe("a hostile model against the files tools' approval rules", () => {
  it("every spelling of an asked path waits for approval, in files.write and every patch form, and nothing is written", async () => {
    const toolset = await hostile.attacker.toolsets.create({
      library: { files: {} },
      // The tools' own rate limits (20 a minute) would refuse the attack before its approvals are seen.
      policies: { "files.*": { rateLimit: { perMinute: 100_000 } } },
    });
    const writes = ASKED.flatMap(spellings);
    const patchTexts = writes.flatMap(patches);
    const started = await hostile.attacker.runs.start({
      toolset: toolset.id,
      namespace: "mallory",
      input: { writes, patches: patchTexts },
      source: `import { files } from "tapedeck:tools";
        export default async (input: { writes: string[]; patches: string[] }) => {
          const codex = await files.patch({ patch: "*** Begin Patch\\n*** Add File: .env\\n+X=1\\n*** End Patch\\n" }).catch((e) => e.code);
          return { codex, all: await Promise.allSettled([
            ...input.writes.map((path) => files.write({ path, content: "pwned" })),
            ...input.patches.map((patch) => files.patch({ patch })),
          ]) };
        };`,
    });
    if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
    const run = await hostile.attacker.runs.get(started.run.id, { wait: 30 });
    assert.equal(run.status, "waiting", JSON.stringify(run).slice(0, 2000));
    const pending = await hostile.attacker.approvals.pending(started.run.id);
    const asked = pending.filter((p) => p.kind === "approval");
    assert.equal(asked.length, writes.length + patchTexts.length, "every write and every patch waits for approval");
    assert.deepEqual([...new Set(asked.filter((p) => p.tool === "files.write").map((p) => (p.kind === "approval" ? p.reason : "")))].sort(), [
      "Changes a CI workflow (it runs with the repository's secrets)",
      "Changes git's own files (hooks there run on every commit)",
      "Writes a shell script",
      "Writes an environment file (where secrets are kept)",
    ]);
    const workspace = join(hostile.server.dataDir, "library", "workspaces", "n-mallory");
    assert.deepEqual(existsSync(workspace) ? readdirSync(workspace, { recursive: true }) : [], [], "nothing was written");
    await hostile.attacker.runs.cancel(started.run.id);
    await hostile.assertStillServing();
  });

  it("a saved tool granted the workspace meets the same rules: it cannot write an asked path under any spelling", async () => {
    const toolset = await hostile.attacker.toolsets.create({ library: { files: {} } });
    const saved = await hostile.attacker.toolsets.saveTool(toolset.id, {
      group: "mine",
      name: "put",
      description: "Writes a file.",
      code: `import { workspace } from "tapedeck:tools";\nexport default async (input: { path: string }) => (await workspace.write({ path: input.path, content: "pwned" })).path;`,
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      capabilities: { workspace: "rw" },
      tests: [{ input: { path: "notes.txt" }, output: "notes.txt" }],
    });
    if (!saved.saved || saved.id === undefined) return assert.fail(JSON.stringify(saved));
    const writes = ASKED.flatMap(spellings);
    const started = await hostile.attacker.runs.start({
      toolset: saved.id,
      namespace: "mallory",
      input: { writes },
      source: `import { mine } from "tapedeck:tools";
        export default async (input: { writes: string[] }) => {
          const out: string[] = [];
          for (const path of input.writes) out.push(await mine.put({ path }).then((p) => "written " + p, (e) => e.code + ": " + e.message));
          return out;
        };`,
    });
    if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
    const run = await hostile.attacker.runs.get(started.run.id, { wait: 60 });
    assert.equal(run.status, "completed", JSON.stringify(run).slice(0, 2000));
    const out = run.output as string[];
    assert.deepEqual(
      out.filter((line) => !/workspace\.write is refused: .+, which asks for a person's approval/.test(line)),
      [],
      "every write was refused",
    );
    const workspace = join(hostile.server.dataDir, "library", "workspaces", "n-mallory");
    assert.deepEqual(existsSync(workspace) ? readdirSync(workspace, { recursive: true }) : [], [], "nothing was written");
    await hostile.assertStillServing();
  });
});
