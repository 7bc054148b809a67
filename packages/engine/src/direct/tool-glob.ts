/**
 * Globs on tool names, as approval rules and per-tool settings write them: `*` matches any run of
 * characters (none included, dots included), `?` exactly one character, anything else itself.
 * `*_delete`, `github.*`, `tool_execute`, `*`.
 *
 * A glob is tested against each name a tool goes by — its path `group.name`, its name, and its
 * model name — and matches the tool when it matches any of them, so rules can be written with
 * the names the server, the journal or the model use.
 *
 * Invariant: matching is the two-pointer wildcard algorithm, O(glob × name) at worst, with no
 * regular expression built from user text.
 */

/** Longest glob accepted: tool paths are at most a few hundred characters. */
export const MAX_GLOB_LENGTH = 256;

/** What is wrong with `glob` as a tool-name glob, or `undefined` when it is fine. */
export function globProblem(glob: unknown): string | undefined {
  if (typeof glob !== "string") return "must be a string (a tool name, or a glob with * and ?)";
  if (glob === "") return 'must not be empty (write "*" for every tool)';
  if (glob.length > MAX_GLOB_LENGTH) return `is longer than ${MAX_GLOB_LENGTH} characters`;
  return undefined;
}

/** The names a tool goes by, as globs are tested against them. */
export interface ToolNames {
  /** `group.name`. */
  readonly path: string;
  /** The tool's name in its group (as its server names it). */
  readonly name: string;
  /** The name the model calls it by. */
  readonly modelName: string;
}

export function globMatchesTool(glob: string, tool: ToolNames): boolean {
  return globMatches(glob, tool.path) || globMatches(glob, tool.name) || globMatches(glob, tool.modelName);
}

export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (g < glob.length && (glob[g] === "?" || (glob[g] !== "*" && glob[g] === text[t]))) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === "*") {
      star = g++;
      resume = t;
    } else if (star >= 0) {
      // Let the last star take one more character and try again from there.
      g = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (glob[g] === "*") g++;
  return g === glob.length;
}
