import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ToolContext } from "../library-tool.js";
import { failureOf, resultOf } from "../test-support/call-tool.js";
import { applyPatchTool } from "./apply-patch.js";
import { listDirTool, MAX_ENTRIES } from "./list-dir.js";
import { MAX_CHARS, MAX_LINE_CHARS, MAX_LINES, readFileTool } from "./read-file.js";
import { Workspace } from "./workspace.js";
import { writeFileTool } from "./write-file.js";

let dir: string;
let n = 0;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "tapedeck-files-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh workspace for each test. */
async function workspace(mode: "rw" | "ro" = "rw"): Promise<{ root: string; ctx: ToolContext<"workspace"> }> {
  const root = join(dir, `ws${n++}`);
  mkdirSync(root);
  const opened = await Workspace.open(root, mode);
  return { root: opened.root, ctx: { now: () => 0, signal: new AbortController().signal, workspace: opened } };
}

const lines = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `line ${i + from}`).join("\n");

void describe("files.read", () => {
  it("reads a window of lines; a past-the-end offset says how many lines there are", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "a.txt"), `${lines(10)}\n`);
    assert.deepEqual(await resultOf(readFileTool, { path: "a.txt", offset: 3, limit: 2 }, ctx), {
      path: "a.txt",
      content: "line 3\nline 4",
      startLine: 3,
      endLine: 4,
      sizeBytes: statSync(join(root, "a.txt")).size,
      nextOffset: 5,
      note: "More lines follow (2 lines were read): call again with offset 5.",
    });
    const whole = await resultOf(readFileTool, { path: "a.txt" }, ctx);
    assert.equal(whole.content, lines(10));
    assert.equal(whole.totalLines, 10);
    assert.equal(whole.nextOffset, undefined);
    const past = await resultOf(readFileTool, { path: "a.txt", offset: 50 }, ctx);
    assert.equal(past.content, "");
    assert.match(past.note as string, /The file has 10 lines; offset 50 is past its end/);
  });

  it("never refuses a large file: clamps the window, says what was cut and where to read on, and every line is reached", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "big.log"), `${lines(5_000)}\n`);
    const first = await resultOf(readFileTool, { path: "big.log", limit: 100_000 }, ctx);
    assert.equal(first.endLine, MAX_LINES);
    assert.equal(first.nextOffset, MAX_LINES + 1);
    assert.match(first.note as string, /limit 100000 was lowered to 2000/);
    let offset = 1;
    const seen: string[] = [];
    for (;;) {
      const page = await resultOf(readFileTool, { path: "big.log", offset }, ctx);
      if (page.content !== "") seen.push(...(page.content as string).split("\n"));
      if (page.nextOffset === undefined) break;
      offset = page.nextOffset as number;
    }
    assert.deepEqual(seen, lines(5_000).split("\n"));
    writeFileSync(join(root, "wide.txt"), Array.from({ length: 200 }, () => "w".repeat(1_000)).join("\n"));
    const wide = await resultOf(readFileTool, { path: "wide.txt" }, ctx);
    assert.ok((wide.content as string).length <= MAX_CHARS);
    assert.match(wide.note as string, /the 100000-character budget was spent/);
  });

  it("cuts a line longer than the limit and says which", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "min.js"), `short\n${"x".repeat(MAX_LINE_CHARS + 500)}\nend`);
    const read = await resultOf(readFileTool, { path: "min.js" }, ctx);
    assert.equal((read.content as string).split("\n")[1], `${"x".repeat(MAX_LINE_CHARS)}… [500 more characters on this line]`);
    assert.match(read.note as string, /Lines longer than 4000 characters were cut \(2\)/);
    assert.equal(read.totalLines, 3);
  });

  it("a binary file is described, not shown; a folder, a FIFO and a missing file are failures that say so", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "img.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    const binary = await resultOf(readFileTool, { path: "img.png" }, ctx);
    assert.equal(binary.content, "");
    assert.match(binary.note as string, /binary file \(6 bytes\)/);
    mkdirSync(join(root, "folder"));
    assert.equal((await failureOf(readFileTool, { path: "folder" }, ctx)).code, "wrong_type");
    execFileSync("mkfifo", [join(root, "pipe")]);
    const fifo = await failureOf(readFileTool, { path: "pipe" }, ctx);
    assert.deepEqual(fifo, { code: "wrong_type", message: "pipe is not a regular file; give the path of a file." }, "a FIFO does not hang the read");
    assert.deepEqual(await failureOf(readFileTool, { path: "nope/x.txt" }, ctx), { code: "not_found", message: "Nothing is at nope (in nope/x.txt)." });
  });
});

void describe("files.write", () => {
  it("creates the file and its folders, replaces it atomically keeping its mode, and leaves no temporary file", async () => {
    const { root, ctx } = await workspace();
    assert.deepEqual(await resultOf(writeFileTool, { path: "a/b/c.txt", content: "one" }, ctx), { path: "a/b/c.txt", created: true, bytes: 3 });
    chmodSync(join(root, "a/b/c.txt"), 0o600);
    assert.deepEqual(await resultOf(writeFileTool, { path: "a/b/c.txt", content: "two ✓" }, ctx), { path: "a/b/c.txt", created: false, bytes: 7 });
    assert.equal(readFileSync(join(root, "a/b/c.txt"), "utf8"), "two ✓");
    assert.equal(statSync(join(root, "a/b/c.txt")).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(join(root, "a/b")), ["c.txt"]);
  });

  it("a folder cannot be replaced, a file cannot be a folder, and a read-only workspace refuses every change", async () => {
    const { root, ctx } = await workspace();
    mkdirSync(join(root, "d"));
    writeFileSync(join(root, "f"), "x");
    assert.equal((await failureOf(writeFileTool, { path: "d", content: "x" }, ctx)).code, "wrong_type");
    assert.equal((await failureOf(writeFileTool, { path: "f/g.txt", content: "x" }, ctx)).code, "wrong_type");
    const ro = await workspace("ro");
    writeFileSync(join(ro.root, "keep.txt"), "kept");
    const refused = await failureOf(writeFileTool, { path: "keep.txt", content: "changed" }, ro.ctx);
    assert.equal(refused.code, "read_only");
    const patched = await failureOf(applyPatchTool, { patch: "--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-kept\n+changed\n" }, ro.ctx);
    assert.equal(patched.code, "read_only");
    assert.equal(readFileSync(join(ro.root, "keep.txt"), "utf8"), "kept");
  });
});

void describe("files.list", () => {
  it("sorts by name, recurses in a stable order, lists links without following them, and does not enter .git", async () => {
    const { root, ctx } = await workspace();
    for (const path of ["b.txt", "a/z.txt", "a/c/d.txt", "B.md", ".git/HEAD", "node_modules/x/index.js"]) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), "12345");
    }
    symlinkSync("a", join(root, "link"));
    const flat = await resultOf(listDirTool, {}, ctx);
    assert.deepEqual(
      (flat.entries as { path: string; type: string }[]).map((e) => `${e.path}:${e.type}`),
      [".git:directory", "B.md:file", "a:directory", "b.txt:file", "link:symlink", "node_modules:directory"],
    );
    const deep = await resultOf(listDirTool, { recursive: true }, ctx);
    assert.deepEqual(
      (deep.entries as { path: string }[]).map((e) => e.path),
      [".git", "B.md", "a", "a/c", "a/c/d.txt", "a/z.txt", "b.txt", "link", "node_modules"],
    );
    assert.equal((deep.entries as { path: string; sizeBytes?: number }[]).find((e) => e.path === "a/z.txt")?.sizeBytes, 5);
    assert.deepEqual(
      ((await resultOf(listDirTool, { path: ".git" }, ctx)).entries as { path: string }[]).map((e) => e.path),
      [".git/HEAD"],
      "asked by path, .git is listed",
    );
  });

  it("is bounded, and says so", async () => {
    const { root, ctx } = await workspace();
    for (let i = 0; i < 30; i++) writeFileSync(join(root, `f${String(i).padStart(2, "0")}`), "");
    const listed = await resultOf(listDirTool, { maxEntries: 10 }, ctx);
    assert.equal((listed.entries as unknown[]).length, 10);
    assert.equal(listed.truncated, true);
    assert.match(listed.note as string, new RegExp(`Only the first 10 entries are listed.*at most ${MAX_ENTRIES}`));
  });
});

void describe("files.patch", () => {
  const SOURCE = "fn main() {\n    // existing code\n}\n4\n5\n6\n7\n8\n9\nline ten\nline eleven\n";

  it("applies hunks (even a few lines off), creates, deletes and renames files, all in one patch", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "main.rs"), `// header\n// added later\n${SOURCE}`);
    writeFileSync(join(root, "old.txt"), "bye\n");
    writeFileSync(join(root, "from.txt"), "moving\n");
    const patch = [
      "--- a/main.rs",
      "+++ b/main.rs",
      "@@ -1,3 +1,4 @@",
      " fn main() {",
      '+    println!("Hello, world!");',
      "     // existing code",
      " }",
      "@@ -10,2 +11,2 @@",
      " line ten",
      "-line eleven",
      "+line ELEVEN",
      "--- /dev/null",
      "+++ b/new/file.txt",
      "@@ -0,0 +1,2 @@",
      "+hello",
      "+world",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "--- a/from.txt",
      "+++ b/to.txt",
      "@@ -1 +1 @@",
      "-moving",
      "+moved",
      "",
    ].join("\n");
    assert.deepEqual(await resultOf(applyPatchTool, { patch }, ctx), {
      files: [
        { path: "main.rs", action: "modified", hunks: 2 },
        { path: "new/file.txt", action: "created", hunks: 1 },
        { path: "old.txt", action: "deleted", hunks: 1 },
        { path: "to.txt", action: "renamed", hunks: 1, from: "from.txt" },
      ],
    });
    assert.equal(
      readFileSync(join(root, "main.rs"), "utf8"),
      `// header\n// added later\n${SOURCE.replace("{\n", '{\n    println!("Hello, world!");\n').replace("line eleven", "line ELEVEN")}`,
    );
    assert.equal(readFileSync(join(root, "new/file.txt"), "utf8"), "hello\nworld\n");
    assert.deepEqual(readdirSync(root).sort(), ["main.rs", "new", "to.txt"]);
    assert.equal(readFileSync(join(root, "to.txt"), "utf8"), "moved\n");
  });

  it("a hunk that does not apply is reported with its line and what the file has there, and nothing is written", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "main.rs"), SOURCE);
    writeFileSync(join(root, "other.txt"), "a\nb\n");
    const patch = [
      "--- a/other.txt",
      "+++ b/other.txt",
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "+B",
      "--- a/main.rs",
      "+++ b/main.rs",
      "@@ -1,3 +1,3 @@",
      " fn main() {",
      "-    // existing code",
      "+    // new code",
      " }",
      "@@ -10,2 +10,2 @@",
      " line ten",
      "-line twelve",
      "+line TWELVE",
      "",
    ].join("\n");
    const failure = await failureOf(applyPatchTool, { patch }, ctx);
    assert.equal(failure.code, "patch_failed");
    assert.equal(
      failure.message,
      'Nothing was written: Hunk 2 of main.rs (@@ -10,2 +10,2 @@) does not apply at line 10: line 11 should be "line twelve" but is "line eleven" (and the hunk\'s lines are not found nearby either).',
    );
    assert.equal(readFileSync(join(root, "other.txt"), "utf8"), "a\nb\n", "the file whose hunks applied is not written either");
    assert.equal(readFileSync(join(root, "main.rs"), "utf8"), SOURCE);
  });

  it("adapts to CRLF files; refuses an unreadable patch, a patch of a missing file, and creating a file that exists", async () => {
    const { root, ctx } = await workspace();
    writeFileSync(join(root, "win.txt"), "a\r\nb\r\n");
    await resultOf(applyPatchTool, { patch: "--- a/win.txt\n+++ b/win.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n" }, ctx);
    assert.equal(readFileSync(join(root, "win.txt"), "utf8"), "a\r\nc\r\n");
    assert.equal((await failureOf(applyPatchTool, { patch: "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n" }, ctx)).code, "invalid_patch");
    assert.match((await failureOf(applyPatchTool, { patch: "just some text" }, ctx)).message, /The patch has no hunks/);
    assert.match((await failureOf(applyPatchTool, { patch: "--- a/missing\n+++ b/missing\n@@ -1 +1 @@\n-a\n+b\n" }, ctx)).message, /missing does not exist/);
    assert.match(
      (await failureOf(applyPatchTool, { patch: "--- /dev/null\n+++ b/win.txt\n@@ -0,0 +1 @@\n+x\n" }, ctx)).message,
      /win\.txt already exists, but the patch creates it/,
    );
  });
});

void describe("no time-of-check to time-of-use escape", () => {
  it("a folder swapped for a link to outside while files are read and written is never followed", async () => {
    const { root, ctx } = await workspace();
    const outside = join(dir, `outside${n++}`);
    mkdirSync(outside);
    writeFileSync(join(outside, "f.txt"), "OUTSIDE");
    mkdirSync(join(root, "d"));
    writeFileSync(join(root, "d", "f.txt"), "inside");
    symlinkSync(outside, join(root, "hold"));
    let flips = 0;
    let running = true;
    // Swaps d (a real folder) with hold (a link to outside) and back, as fast as the event loop
    // allows, while the tools run. A write that lands while d is missing creates a new d: it is
    // removed, so the swap goes on.
    const flip = (): void => {
      if (!running) return;
      renameSync(join(root, "d"), join(root, "tmp"));
      try {
        renameSync(join(root, "hold"), join(root, "d"));
      } catch {
        rmSync(join(root, "d"), { recursive: true, force: true });
        renameSync(join(root, "hold"), join(root, "d"));
      }
      renameSync(join(root, "tmp"), join(root, "hold"));
      flips++;
      setImmediate(flip);
    };
    setImmediate(flip);
    const leaks: string[] = [];
    for (let i = 0; i < 200; i++) {
      const read = await readFileTool.execute({ path: "d/f.txt" }, ctx);
      if (JSON.stringify(read).includes("OUTSIDE")) leaks.push(`read ${i}`);
      await writeFileTool.execute({ path: "d/w.txt", content: "x" }, ctx);
    }
    running = false;
    assert.ok(flips > 50, `the folder was swapped ${flips} times`);
    assert.deepEqual(leaks, []);
    assert.deepEqual(readdirSync(outside), ["f.txt"], "nothing was written outside");
  });
});
