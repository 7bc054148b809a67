import { applyPatch, parsePatch, type StructuredPatch, type StructuredPatchHunk } from "diff";
import { defineTool, failure, result, type ToolResult } from "../library-tool.js";
import type { Workspace } from "./workspace.js";
import { PATCH_APPROVAL } from "./write-approval.js";

/**
 * `files.patch`: applies a unified diff (parsed and applied by the `diff` package) to the
 * workspace.
 *
 * Invariants:
 * - All or nothing: every hunk of every file is applied in memory first; if one does not apply,
 *   nothing is written, and the failure names each such hunk, the line it was meant for, and the
 *   first line of its context that the file does not have there (what it expected, what is there).
 * - Each file is then written atomically (`Workspace.write`); paths obey the workspace's rules
 *   (a diff naming `../x` or `/etc/x` is refused before anything is read).
 * - Hunks may sit a few lines off their header (the package searches near it); line endings of
 *   the patch adapt to the file's (LF patch on a CRLF file). No fuzz: context must match exactly.
 */

/** Largest file a patch applies to: patches are for source files, not data. */
export const MAX_PATCH_FILE_BYTES = 8 * 1024 * 1024;

type Change =
  | { readonly action: "modified" | "created"; readonly path: string; readonly content: string; readonly hunks: number }
  | { readonly action: "deleted"; readonly path: string; readonly hunks: number }
  | { readonly action: "renamed"; readonly from: string; readonly path: string; readonly content: string; readonly hunks: number };

export const applyPatchTool = defineTool<{ patch: string }, "workspace">({
  name: "patch",
  description:
    "Applies a unified diff to files of the workspace (as `diff -u` or `git diff` write it: `--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks; " +
    "/dev/null creates or deletes a file). All or nothing: if a hunk does not apply, nothing is written and the failure says which hunk, " +
    "the line, and what the file has there instead — read the file and write the hunk again. Context lines must match exactly.",
  inputSchema: {
    type: "object",
    properties: { patch: { type: "string", minLength: 1, description: "A unified diff of one or more files." } },
    required: ["patch"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      files: {
        type: "array",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            action: { type: "string", enum: ["modified", "created", "deleted", "renamed"] },
            from: { type: "string" },
            hunks: { type: "integer" },
          },
          required: ["path", "action", "hunks"],
          additionalProperties: false,
        },
      },
    },
    required: ["files"],
    additionalProperties: false,
  },
  risk: "medium",
  approval: PATCH_APPROVAL,
  rateLimit: { perMinute: 20, perHour: 200 },
  needs: ["workspace"],
  execute: ({ patch }, { workspace }) => applyWorkspacePatch(workspace, patch),
});

export async function applyWorkspacePatch(workspace: Workspace, text: string): Promise<ToolResult> {
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(text);
  } catch (error) {
    return failure("invalid_patch", `The patch cannot be read: ${(error as Error).message}. ${FORMAT}`);
  }
  const files = filesChanged(patches);
  if (files.length === 0) return failure("invalid_patch", `The patch has no hunks, so it changes nothing. ${FORMAT}`);
  // Contents as the patch goes: a file patched twice in one diff sees the first patch's result.
  const contents = new Map<string, string | null>();
  const changes: Change[] = [];
  const problems: Problem[] = [];
  for (const patch of files) {
    const planned = await plan(workspace, patch, contents);
    if ("problem" in planned) problems.push(planned);
    else changes.push(planned);
  }
  if (problems.length > 0) {
    // A path the workspace refuses makes the whole patch a refusal; else the hunks are at fault.
    const code = problems.some((problem) => problem.refused === true) ? "refused" : "patch_failed";
    return failure(code, `Nothing was written: ${problems.map((p) => p.problem).join(" ")}`, { problems: problems.map((p) => p.problem) });
  }
  for (const change of changes) {
    const written = change.action === "deleted" ? await workspace.remove(change.path) : await workspace.write(change.path, change.content);
    if (!written.ok) return failure(written.code, `${written.message} (Files before ${change.path} in the patch were written.)`);
    if (change.action === "renamed") {
      const removed = await workspace.remove(change.from);
      if (!removed.ok) return failure(removed.code, removed.message);
    }
  }
  return result({
    files: changes.map((change) => ({
      path: change.path,
      action: change.action,
      hunks: change.hunks,
      ...(change.action === "renamed" ? { from: change.from } : {}),
    })),
  });
}

interface Problem {
  readonly problem: string;
  /** The workspace refused a path of the patch. */
  readonly refused?: boolean;
}

const FORMAT = "Write a unified diff: a `--- a/path` line, a `+++ b/path` line, then hunks starting with `@@ -line,count +line,count @@`.";

/** The files of a parsed patch that it changes: those with hunks, and renames. */
function filesChanged(patches: readonly StructuredPatch[]): readonly StructuredPatch[] {
  return patches.filter((patch) => patch.hunks.length > 0 || isRename(patch));
}

/** The paths one file's patch reads (`from`) and writes (`to`), as written in the patch (git's a/ b/ taken off); undefined for /dev/null. */
function namesOf(patch: StructuredPatch): { readonly from: string | undefined; readonly to: string | undefined } {
  return { from: fileName(patch.oldFileName, patch.newFileName, "old"), to: fileName(patch.newFileName, patch.oldFileName, "new") };
}

/**
 * The paths a patch would change, each file's `from` and `to` exactly as `applyWorkspacePatch`
 * reads them (the same parser, the same a/ b/ rule), before the workspace checks them; `undefined`
 * when the patch cannot be read (it then writes nothing). For the approval rules
 * (`files-approval-view.ts`), which must judge the files the patch writes, not its text.
 */
export function patchedPaths(text: string): readonly { readonly from: string | undefined; readonly to: string | undefined }[] | undefined {
  try {
    return filesChanged(parsePatch(text)).map(namesOf);
  } catch {
    return undefined;
  }
}

async function plan(workspace: Workspace, patch: StructuredPatch, contents: Map<string, string | null>): Promise<Change | Problem> {
  const { from, to } = namesOf(patch);
  if (from === undefined && to === undefined) return { problem: `A file's patch names no file (no --- and +++ lines). ${FORMAT}` };
  const source = from === undefined ? "" : await current(workspace, from, contents);
  if (typeof source === "object") return source;
  if (to !== undefined && to !== from) {
    // A file the patch creates (or renames to) must not exist yet — and its path must be allowed, checked before anything is written.
    const existing = await current(workspace, to, contents);
    if (typeof existing === "object") return existing;
    if (typeof existing === "string") {
      return {
        problem: `${to} already exists, but the patch ${from === undefined ? "creates it (--- /dev/null)" : `renames ${from} to it`}; patch it as a change instead.`,
      };
    }
  }
  const applied = applyHunks(source, patch, from ?? to!);
  if (typeof applied !== "string") return applied;
  if (to === undefined) {
    contents.set(from!, null);
    return { action: "deleted", path: from!, hunks: patch.hunks.length };
  }
  contents.set(to, applied);
  if (from === undefined) return { action: "created", path: to, content: applied, hunks: patch.hunks.length };
  if (from !== to) {
    contents.set(from, null);
    return { action: "renamed", from, path: to, content: applied, hunks: patch.hunks.length };
  }
  return { action: "modified", path: to, content: applied, hunks: patch.hunks.length };
}

/** The text of `path` as the patch has it so far; a problem when it cannot be read. */
async function current(workspace: Workspace, path: string, contents: Map<string, string | null>): Promise<string | undefined | Problem> {
  if (contents.has(path)) return contents.get(path) ?? undefined;
  const opened = await workspace.openFile(path);
  if (!opened.ok) return opened.code === "not_found" ? undefined : { problem: opened.message, refused: opened.code === "refused" };
  try {
    if (opened.size > MAX_PATCH_FILE_BYTES)
      return { problem: `${path} is ${opened.size} bytes; patches apply to files of at most ${MAX_PATCH_FILE_BYTES}. Use write instead.` };
    return await opened.file.readFile("utf8");
  } finally {
    await opened.file.close();
  }
}

/** The patched text, or the first hunk that does not apply, described. */
function applyHunks(source: string | undefined, patch: StructuredPatch, path: string): string | Problem {
  if (source === undefined) return { problem: `${path} does not exist; the patch changes it. Create it with --- /dev/null, or check the path.` };
  if (patch.hunks.length === 0) return source;
  const whole = applyPatch(source, patch);
  if (whole !== false) return whole;
  // Which hunk: the first whose prefix of the patch no longer applies.
  for (let count = 1; count <= patch.hunks.length; count++) {
    if (applyPatch(source, { ...patch, hunks: patch.hunks.slice(0, count) }) === false) {
      return { problem: describeMismatch(source, patch.hunks[count - 1]!, count, path) };
    }
  }
  return { problem: `The hunks of ${path} apply one by one but not together (they overlap); make one hunk of them.` };
}

function describeMismatch(source: string, hunk: StructuredPatchHunk, index: number, path: string): string {
  const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
  const lines = source.split(/\r?\n/);
  const expected = hunk.lines.filter((line) => line.startsWith(" ") || line.startsWith("-")).map((line) => line.slice(1));
  const start = Math.max(hunk.oldStart, 1);
  for (const [offset, want] of expected.entries()) {
    const number = start + offset;
    const have = lines[number - 1];
    if (have === undefined || number > lines.length - (source.endsWith("\n") ? 1 : 0)) {
      return `Hunk ${index} of ${path} (${header}) does not apply: it expects line ${number} to be ${JSON.stringify(want)}, but the file has only ${lines.length - (source.endsWith("\n") ? 1 : 0)} lines.`;
    }
    if (have !== want) {
      return `Hunk ${index} of ${path} (${header}) does not apply at line ${start}: line ${number} should be ${JSON.stringify(want)} but is ${JSON.stringify(have)} (and the hunk's lines are not found nearby either).`;
    }
  }
  return `Hunk ${index} of ${path} (${header}) matches at line ${start} but cannot be applied there (an earlier hunk already changed those lines, or the end-of-file newline differs).`;
}

/** A header's file name without git's a/ b/ prefix; undefined for /dev/null or no header. */
function fileName(name: string | undefined, other: string | undefined, side: "old" | "new"): string | undefined {
  if (name === undefined || name === "/dev/null") return undefined;
  const prefix = side === "old" ? "a/" : "b/";
  const otherPrefix = side === "old" ? "b/" : "a/";
  // git's prefixes come in pairs; a lone "a/" may be a folder named a.
  const strip = name.startsWith(prefix) && (other === undefined || other === "/dev/null" || other.startsWith(otherPrefix));
  return strip ? name.slice(2) : name;
}

function isRename(patch: StructuredPatch): boolean {
  return (patch as { isRename?: boolean }).isRename === true;
}
