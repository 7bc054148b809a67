import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ToolContext } from "../library-tool.js";
import { callTool } from "../test-support/call-tool.js";
import { applyPatchTool } from "./apply-patch.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";
import { HOSTILE_PATHS, LEGITIMATE_PATHS } from "./test-support/path-corpus.js";
import { plantLinks, SECRET } from "./test-support/plant-links.js";
import { checkWorkspacePath } from "./workspace-path.js";
import { Workspace } from "./workspace.js";
import { writeFileTool } from "./write-file.js";

/**
 * The path-traversal corpus against every files tool on a real folder with planted links: each
 * hostile path is refused (code `refused`, with a reason) by read, write, list and patch, and
 * the folder outside is exactly as it was. The legitimate corpus must all work.
 */

let dir: string;
let root: string;
let outside: string;
let ctx: ToolContext<"workspace">;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tapedeck-paths-"));
  root = join(dir, "workspace");
  outside = join(dir, "outside");
  const workspace = await Workspace.open(root, "rw");
  plantLinks(workspace.root, outside);
  ctx = { now: () => 0, signal: new AbortController().signal, workspace };
});
after(() => rmSync(dir, { recursive: true, force: true }));

const escapeForPatch = (path: string) => !/[\u0000-\u001f\u007f]/.test(path);

void describe("the path-traversal corpus", () => {
  it(`has at least 100 hostile paths (${HOSTILE_PATHS.length})`, () => assert.ok(HOSTILE_PATHS.length >= 100));

  it("every hostile path is refused by read, write, list and patch, with a reason", async () => {
    const escaped: string[] = [];
    for (const path of HOSTILE_PATHS) {
      const attempts = [
        await callTool(readFileTool, { path }, ctx),
        await callTool(writeFileTool, { path, content: "pwned" }, ctx),
        await callTool(listDirTool, { path }, ctx),
        ...(escapeForPatch(path) ? [await callTool(applyPatchTool, { patch: `--- /dev/null\n+++ ${path}\n@@ -0,0 +1 @@\n+pwned\n` }, ctx)] : []),
        ...(escapeForPatch(path) ? [await callTool(applyPatchTool, { patch: `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${SECRET}\n+pwned\n` }, ctx)] : []),
      ];
      attempts.forEach((outcome, index) => {
        const tool = ["read", "write", "list", "patch (create)", "patch (modify)"][index];
        if (outcome.kind !== "failure" || outcome.failure.code !== "refused") escaped.push(`${tool} ${JSON.stringify(path)}: ${JSON.stringify(outcome)}`);
        else if (!/refused: .+/.test(outcome.failure.message)) escaped.push(`${tool} ${JSON.stringify(path)}: no reason in ${outcome.failure.message}`);
        if (JSON.stringify(outcome).includes("TOP SECRET")) escaped.push(`${tool} ${JSON.stringify(path)} leaked the secret`);
      });
    }
    assert.deepEqual(escaped, [], `${escaped.length} attempts were not refused`);
    assert.deepEqual(readdirSync(outside), ["secret.txt"], "nothing was created outside");
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), SECRET, "nothing was changed outside");
  });

  it("every legitimate path is written, read back and listed", async () => {
    for (const path of LEGITIMATE_PATHS) {
      const content = `content of ${path}`;
      const written = await callTool(writeFileTool, { path, content }, ctx);
      assert.equal(written.kind, "result", `write ${JSON.stringify(path)}: ${JSON.stringify(written)}`);
      const read = await callTool(readFileTool, { path }, ctx);
      assert.equal(read.kind === "result" && read.value && (read.value as { content: string }).content, content, `read ${JSON.stringify(path)}`);
      const checked = checkWorkspacePath(path);
      assert.ok(checked.ok);
      const parent = checked.segments.slice(0, -1).join("/") || ".";
      const listed = await callTool(listDirTool, { path: parent, maxEntries: 2_000 }, ctx);
      assert.ok(
        listed.kind === "result" && (listed.value as { entries: { path: string }[] }).entries.some((e) => e.path === checked.relative),
        `list ${parent} shows ${checked.relative}`,
      );
    }
    assert.equal(readFileSync(join(root, "inner", "real.txt"), "utf8"), "content of inside-link", "a link inside is followed to its target");
  });

  it("refusals say why, in words the model can act on", () => {
    const reason = (path: string) => {
      const checked = checkWorkspacePath(path);
      return checked.ok ? "" : checked.reason;
    };
    assert.match(reason("../x"), /"\.\." is not allowed/);
    assert.match(reason("/etc/passwd"), /it is absolute: give a path relative to the workspace/);
    assert.match(reason("a\u0000b"), /NUL byte/);
    assert.match(reason("..%2fx"), /percent-encoded separator/);
    assert.match(reason("a\\b"), /separate folders with "\/"/);
    assert.match(reason("．．/x"), /Unicode normalisation/);
    assert.match(reason("a".repeat(256)), /longer than 255 bytes/);
  });
});
