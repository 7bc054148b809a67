/**
 * Whether a path a tool was given names something inside a workspace, judged on its text
 * alone, before anything is opened (what it names on disk is checked when it is opened:
 * `workspace.ts`). Every refusal says why, for the model that wrote the path.
 *
 * Invariants:
 * - An accepted path is relative, made of segments that are neither `..` nor empty, none of
 *   them longer than `MAX_SEGMENT_BYTES`, the whole at most `MAX_PATH_BYTES`; `.` segments and
 *   repeated or trailing `/` are dropped. So joining it to the workspace root cannot leave it.
 * - Refused: NUL and other control characters; `\` (a separator elsewhere); absolute paths,
 *   `~`, Windows drives; percent-encoded separators, dots, NUL, `%` itself and non-ASCII bytes
 *   (`%2f`, `%5c`, `%2e`, `%00`, `%25`, `%c0%af`), which a layer that decodes them would turn
 *   into traversal; and any path that Unicode compatibility normalisation (NFKC, which some
 *   tools apply) would turn into separators, `..` or NUL (`．．／`).
 * - `..` is refused even where it would stay inside (`a/../b`): the model names the path directly.
 */

export type PathCheck =
  { readonly ok: true; readonly segments: readonly string[]; readonly relative: string } | { readonly ok: false; readonly reason: string };

/** Linux's NAME_MAX. */
export const MAX_SEGMENT_BYTES = 255;
/** Linux's PATH_MAX. */
export const MAX_PATH_BYTES = 4096;
/** Folders deep: far more than any project has, few enough to walk one by one. */
export const MAX_DEPTH = 64;

const CONTROL = /[\u0000-\u001f\u007f]/;
/** Percent-encodings a decoding layer would turn into a separator, a dot, NUL, another encoding, or a byte of a multi-byte (possibly overlong) sequence. */
const ENCODED = /%(2f|5c|2e|00|25|[89a-f][0-9a-f])/i;

/** Checks `path` (relative to the workspace). `""` and `.` name the workspace itself, allowed only with `allowRoot`. */
export function checkWorkspacePath(path: string, options: { readonly allowRoot?: boolean } = {}): PathCheck {
  const problem = textProblem(path);
  if (problem !== undefined) return refused(path, problem);
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) return refused(path, '".." is not allowed: paths are relative to the workspace and cannot go up; name the file directly');
  const long = segments.find((segment) => Buffer.byteLength(segment) > MAX_SEGMENT_BYTES);
  if (long !== undefined) return refused(path, `the name "${long.slice(0, 40)}…" is longer than ${MAX_SEGMENT_BYTES} bytes, the most a file name can be`);
  if (segments.length > MAX_DEPTH) return refused(path, `it is ${segments.length} folders deep; at most ${MAX_DEPTH} are allowed`);
  if (segments.length === 0 && options.allowRoot !== true) return refused(path, "it names the workspace itself, not a file in it");
  return { ok: true, segments, relative: segments.join("/") };
}

function textProblem(path: string): string | undefined {
  if (CONTROL.test(path)) return path.includes("\u0000") ? "it contains a NUL byte" : "it contains a control character";
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `it is longer than ${MAX_PATH_BYTES} bytes`;
  if (path.includes("\\")) return 'it contains "\\": separate folders with "/"';
  if (path.startsWith("/")) return "it is absolute: give a path relative to the workspace (src/main.ts, not /src/main.ts)";
  if (path === "~" || path.startsWith("~/")) return '"~" is not expanded here: give a path relative to the workspace';
  if (/^[A-Za-z]:/.test(path)) return "it starts with a drive letter: give a path relative to the workspace";
  if (ENCODED.test(path)) return "it contains a percent-encoded separator, dot, NUL or non-ASCII byte (such as %2f or %2e): write the characters themselves";
  const normalized = path.normalize("NFKC");
  if (normalized !== path && changesStructure(path, normalized)) {
    return "it contains characters that Unicode normalisation turns into separators or dots (such as ／ or ．): use plain / and .";
  }
  return undefined;
}

/** Whether NFKC turns `path` into something with other separators or dot segments than it has. */
function changesStructure(path: string, normalized: string): boolean {
  const shape = (text: string) =>
    text
      .split(/[/\\]/)
      .map((segment) => (segment === ".." || segment === "." ? segment : "x"))
      .join("/") + `#${(text.match(/\u0000/g) ?? []).length}`;
  return shape(path) !== shape(normalized);
}

function refused(path: string, reason: string): PathCheck {
  const shown = JSON.stringify(path.length > 120 ? `${path.slice(0, 120)}…` : path);
  return { ok: false, reason: `The path ${shown} is refused: ${reason}.` };
}
