import type { JsonValue } from "@tapedeck/protocol";
import { patchedPaths } from "./apply-patch.js";
import { checkWorkspacePath } from "./workspace-path.js";

/**
 * The arguments of `files.write` and `files.patch` as their approval rules see them: with every
 * path the call writes normalised by `checkWorkspacePath`, the function the workspace opens
 * paths with. A rule matched on the path as written is bypassed by spellings the workspace
 * writes to the same file (`run.bash/`, `.env//`, `.env/.`, `./p1/.github/workflows/ci.yml`),
 * so rules match what will be written.
 *
 * Invariants:
 * - The view has the shape of the arguments (a toolset's own rules keep their pointers): `path`
 *   is replaced by its normalised form; `patch` is the patch's text after one canonical header
 *   pair per file it changes (`--- a/<from>` or `--- /dev/null`, `+++ b/<to>` or `+++ /dev/null`),
 *   found by the parser `files.patch` applies with (`---`/`+++` headers, git's `diff --git` with
 *   `rename from`/`rename to`, quoted names, a tab and a date after a name). The text is kept
 *   after them, so rules on the content still see it, and a header rule matches either spelling:
 *   the view can only add matches, never hide one.
 * - A path the workspace refuses is left as written: the tool refuses it and writes nothing.
 */

/** `files.write`'s arguments with `path` as the workspace will write it. */
export function writeApprovalView(args: JsonValue): JsonValue {
  if (!isObject(args) || typeof args.path !== "string") return args;
  return { ...args, path: normalised(args.path) };
}

/** `files.patch`'s arguments with the files it changes, normalised, as canonical headers before its text. */
export function patchApprovalView(args: JsonValue): JsonValue {
  if (!isObject(args) || typeof args.patch !== "string") return args;
  const files = patchedPaths(args.patch);
  if (files === undefined || files.length === 0) return args;
  const headers = files.flatMap(({ from, to }) => [
    from === undefined ? "--- /dev/null" : `--- a/${normalised(from)}`,
    to === undefined ? "+++ /dev/null" : `+++ b/${normalised(to)}`,
  ]);
  return { ...args, patch: `${headers.join("\n")}\n${args.patch}` };
}

function normalised(path: string): string {
  const checked = checkWorkspacePath(path);
  return checked.ok ? checked.relative : path;
}

function isObject(value: JsonValue): value is { readonly [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
