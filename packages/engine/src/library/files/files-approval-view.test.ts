import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue } from "@tapedeck/protocol";
import { decideApproval } from "../../toolset/approval.js";
import { judgedArgs } from "../judged-args.js";
import { ASKED_PATHS_CORPUS, HOSTILE_PATHS, LEGITIMATE_PATHS, spellingsOf } from "./test-support/path-corpus.js";
import { checkWorkspacePath } from "./workspace-path.js";
import { PATCH_APPROVAL, WRITE_APPROVAL } from "./write-approval.js";

/**
 * The files tools' approval rules judge the path the workspace writes, not its spelling: every
 * spelling of an asked path that the workspace accepts (`run.bash/`, `.env//`, `.env/.`,
 * `./p1/.github/workflows/ci.yml`) asks, for `files.write` and for every header form of
 * `files.patch` its parser reads. (Through a real server: `hostile-file-approvals.test.ts`.)
 */

const write = (path: string) => decideApproval(WRITE_APPROVAL, { tool: "files.write", args: judge("write", { path, content: "x" }) });
const patch = (text: string) => decideApproval(PATCH_APPROVAL, { tool: "files.patch", args: judge("patch", { patch: text }) });
const judge = (name: string, args: JsonValue) => judgedArgs({ source: "library", group: "files", name }, args);

/** Every form of file header `files.patch` reads, naming `path` as the file it writes. */
export function patchForms(path: string): readonly { readonly form: string; readonly patch: string }[] {
  const hunk = "@@ -0,0 +1 @@\n+x\n";
  const change = "@@ -1 +1 @@\n-a\n+b\n";
  return [
    { form: "create, b/", patch: `--- /dev/null\n+++ b/${path}\n${hunk}` },
    { form: "create, no prefix", patch: `--- /dev/null\n+++ ${path}\n${hunk}` },
    { form: "create, a tab and a date", patch: `--- /dev/null\n+++ b/${path}\t2026-01-01 00:00:00\n${hunk}` },
    { form: "create, trailing space", patch: `--- /dev/null\n+++ b/${path} \n${hunk}` },
    { form: "create, quoted", patch: `--- /dev/null\n+++ "b/${path}"\n${hunk}` },
    { form: "modify, a/ b/", patch: `--- a/${path}\n+++ b/${path}\n${change}` },
    { form: "modify, another file first", patch: `--- a/ok.txt\n+++ b/ok.txt\n${change}--- a/${path}\n+++ b/${path}\n${change}` },
    { form: "git, new file", patch: `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n${hunk}` },
    { form: "git, rename only", patch: `diff --git a/notes.txt b/${path}\nsimilarity index 100%\nrename from notes.txt\nrename to ${path}\n` },
    { form: "git, rename quoted", patch: `diff --git a/notes.txt "b/${path}"\nrename from notes.txt\nrename to "${path}"\n` },
    { form: "Index:", patch: `Index: ${path}\n===================================================================\n--- ${path}\n+++ ${path}\n${change}` },
  ];
}

void describe("the files tools' approval rules over the corpus's spellings", () => {
  it("every spelling the workspace accepts of an asked path names that path", () => {
    for (const path of ASKED_PATHS_CORPUS) {
      for (const spelling of spellingsOf(path)) {
        const checked = checkWorkspacePath(spelling);
        assert.ok(checked.ok && checked.relative === path, `${JSON.stringify(spelling)} is written to ${path}`);
      }
    }
  });

  it("files.write asks for every spelling of an asked path, naming the path it writes", () => {
    const sent = ASKED_PATHS_CORPUS.flatMap((path) => spellingsOf(path).filter((spelling) => write(spelling).kind !== "ask"));
    assert.deepEqual(sent, [], "spellings written without approval");
    assert.deepEqual(write(".env/."), { kind: "ask", reason: "Writes an environment file (where secrets are kept)", summary: "Write .env" });
  });

  it("files.patch asks for every spelling of an asked path, in every header form", () => {
    const sent: string[] = [];
    for (const path of ASKED_PATHS_CORPUS) {
      for (const spelling of spellingsOf(path)) {
        for (const { form, patch: text } of patchForms(spelling)) if (patch(text).kind !== "ask") sent.push(`${form}: ${JSON.stringify(spelling)}`);
      }
    }
    assert.deepEqual(sent, [], "patches applied without approval");
  });

  it("the rest of the corpus is judged without a throw, and the legitimate paths are sent", () => {
    for (const path of HOSTILE_PATHS) {
      write(path);
      for (const { patch: text } of patchForms(path)) patch(text);
    }
    for (const path of LEGITIMATE_PATHS) {
      assert.equal(write(path).kind, "send", path);
      for (const { form, patch: text } of patchForms(path)) assert.equal(patch(text).kind, "send", `${form}: ${path}`);
    }
  });

  it("the view adds the files a patch writes and keeps its text, so rules on the content still match", () => {
    const text = "--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-see run.sh\n+see .env\n";
    assert.deepEqual(judge("patch", { patch: text }), { patch: `--- a/x.md\n+++ b/x.md\n${text}` });
    assert.equal(patch(text).kind, "send", "content lines are not headers");
    assert.deepEqual(judge("patch", { patch: "not a patch" }), { patch: "not a patch" }, "a patch that changes nothing is judged as written");
  });
});
