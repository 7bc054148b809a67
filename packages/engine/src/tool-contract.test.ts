import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ToolsetSpec } from "@tapedeck/protocol";
import { EngineError } from "./errors.js";
import { tempDir, testEngine, testSandboxes } from "./test-support/engines.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";

/**
 * The one tool contract's policies at call intake, for every kind of tool: approval as rules on
 * the arguments, each with the reason the approver is shown (a host tool's from the toolset's
 * policy entry, a library tool's from its definition), and refusals by rule.
 */

after(() => testSandboxes().close());

const RUST_SOURCES: ToolsetSpec["policies"] = {
  "code.write_file": {
    approval: {
      kind: "rules",
      rules: [
        { action: "ask", when: [{ pointer: "/path", regex: "\\.(rs|toml)$" }], reason: "Writes Rust sources or Cargo manifests", summary: "Write {/path}" },
        { action: "deny", when: [{ pointer: "/path", regex: "^/" }], reason: "Absolute paths are outside the project" },
      ],
      otherwise: { kind: "never" },
    },
  },
};

describe("approval as rules on the arguments", () => {
  it("a host tool asks for approval only when its policy's rules say, shows the reason, and refuses what a deny rule matches", async () => {
    const harness = new ToolHarness({ "code.write_file": (args) => `wrote ${(args as { path: string }).path}` });
    const t = await testEngine({ hostTools: harness.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["code.write_file"], { policies: RUST_SOURCES }));
      const started = await t.engine.start({
        toolset: id,
        source: `import { code, ToolError } from "tapedeck:tools";
          export default async () => {
            const md = await code.write_file({ path: "README.md" });
            let abs = "";
            try { await code.write_file({ path: "/etc/hosts" }); } catch (e) { abs = e instanceof ToolError ? e.code + ": " + e.message : String(e); }
            const rs = await code.write_file({ path: "src/main.rs" });
            return [md, abs, rs];
          };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      const settled = await t.engine.settled(started.runId);
      assert.equal(settled?.status, "waiting");
      const pending = await t.engine.pendingDecisions({ runId: started.runId });
      assert.deepEqual(
        pending.map((p) => [p.seq, p.tool, p.kind === "approval" ? p.reason : undefined]),
        [[3, "code.write_file", "Writes Rust sources or Cargo manifests"]],
      );
      assert.deepEqual(
        harness.calls.map((c) => (c.args as { path: string }).path),
        ["README.md"],
        "the .md write went at once; the absolute path was never sent",
      );
      await t.engine.approve(started.runId, 3);
      assert.deepEqual(await started.end, {
        status: "completed",
        output: [
          "wrote README.md",
          "refused: code.write_file is refused by its approval rules: Absolute paths are outside the project. Nothing was sent.",
          "wrote src/main.rs",
        ],
      });
    } finally {
      await t.cleanup();
    }
  });

  it("a library tool's own rules apply (files.write asks before writing a shell script), and the toolset's policy can turn them off", async () => {
    const folder = tempDir("tapedeck-library-");
    const t = await testEngine({ libraryFolder: folder.path });
    try {
      const script = `import { files } from "tapedeck:tools";
        export default async () => { await files.write({ path: "notes.md", content: "n" }); await files.write({ path: "deploy.sh", content: "echo hi" }); return "done"; };`;
      const guarded = await t.engine.registerToolset({ library: { files: {} } });
      assert.match(guarded.declarations.prompt, /^files\.write\(.*\) → .* · Some calls \(by their arguments\) need a person's approval and wait for it · /m);
      assert.match(
        guarded.declarations.typescript,
        /@approval Some calls \(by their arguments\) need a person's approval and wait for it: Changes git's own files/,
      );
      const started = await t.engine.start({ toolset: guarded.id, source: script });
      if (started.kind !== "started") throw new Error("refused");
      assert.equal((await t.engine.settled(started.runId))?.status, "waiting");
      const pending = await t.engine.pendingDecisions({ runId: started.runId });
      assert.deepEqual(
        pending.map((p) => [p.seq, p.tool, p.kind === "approval" ? p.reason : undefined]),
        [[2, "files.write", "Writes a shell script"]],
      );
      await t.engine.reject(started.runId, 2, { reason: "no scripts" });
      assert.equal((await started.end).status, "failed");

      const open = await t.engine.registerToolset({ library: { files: {} }, policies: { "files.write": { approval: false } } });
      assert.notEqual(open.id, guarded.id);
      const again = await t.engine.start({ toolset: open.id, source: script });
      if (again.kind !== "started") throw new Error("refused");
      assert.deepEqual(await again.end, { status: "completed", output: "done" });
    } finally {
      await t.cleanup();
      folder.cleanup();
    }
  });

  it("refuses a malformed approval or rate limit in a policy at registration, naming where", async () => {
    const t = await testEngine();
    try {
      const refused = (policy: unknown) =>
        t.engine.registerToolset({ ...harnessToolset(["code.write_file"]), policies: { "code.write_file": policy } }).then(
          () => assert.fail("registered"),
          (error: unknown) => (error instanceof EngineError && error.code === "invalid_toolset" ? error.message : assert.fail(String(error))),
        );
      assert.equal(
        await refused({
          approval: { kind: "rules", rules: [{ action: "ask", when: [{ pointer: "path", regex: "x" }], reason: "r" }], otherwise: { kind: "never" } },
        }),
        'policies["code.write_file"].approval is malformed: approval.rules[0].when[0].pointer: the JSON pointer "path" must start with "/" (or be "" for the whole value)',
      );
      assert.match(await refused({ approval: { kind: "rules", rules: "all" } }), /approval is malformed: it does not have the shape of an approval/);
      assert.equal(await refused({ rateLimit: { perMinute: 0 } }), 'policies["code.write_file"].rateLimit.perMinute: 0 is not a whole number from 1 to 100000');
      assert.equal(await refused({ risk: "extreme" }), 'policies["code.write_file"].risk must be "low", "medium" or "high"');
    } finally {
      await t.cleanup();
    }
  });
});
