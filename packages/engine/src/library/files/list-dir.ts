import { defineTool, failure, result } from "../library-tool.js";
import type { DirectoryEntry } from "./workspace.js";

/**
 * `files.list`: a folder's entries, optionally recursive, in a stable order (by name, code
 * unit order; a folder's entries right after it), bounded by `maxEntries`. Links are listed as
 * links and never followed; the big generated folders (`.git`, `node_modules`) are listed but
 * not entered unless asked for by path.
 */

/** Entries returned by default. */
export const DEFAULT_ENTRIES = 200;
/** Entries returned at most. */
export const MAX_ENTRIES = 2_000;
/** Folders below the one asked for that a recursive listing enters at most. */
export const MAX_LIST_DEPTH = 12;

/** Listed, never entered by a recursive listing: they are large and generated. */
const NOT_ENTERED = new Set([".git", "node_modules", ".venv", "__pycache__", ".tapedeck"]);

interface ListArgs {
  readonly path?: string;
  readonly recursive?: boolean;
  readonly maxEntries?: number;
}

type Entry = {
  readonly path: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  readonly sizeBytes?: number;
};

export const listDirTool = defineTool<ListArgs, "workspace">({
  name: "list",
  description:
    `Lists a folder of the workspace (default: the workspace itself), sorted by name; with recursive, the folders below it too (up to ${MAX_LIST_DEPTH} deep; ` +
    `.git and node_modules are listed but not entered). At most maxEntries (default ${DEFAULT_ENTRIES}, most ${MAX_ENTRIES}); the result says when more were left out.`,
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: 'A folder, relative to the workspace. Default "." (the workspace).' },
      recursive: { type: "boolean", description: "Also list the folders below. Default false." },
      maxEntries: { type: "integer", minimum: 1, maximum: MAX_ENTRIES },
    },
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      path: { type: "string" },
      entries: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, type: { type: "string", enum: ["file", "directory", "symlink", "other"] }, sizeBytes: { type: "integer" } },
          required: ["path", "type"],
          additionalProperties: false,
        },
      },
      truncated: { type: "boolean" },
      note: { type: "string" },
    },
    required: ["path", "entries", "truncated"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  rateLimit: { perMinute: 120, perHour: 1_200 },
  needs: ["workspace"],
  execute: async ({ path = ".", recursive = false, maxEntries = DEFAULT_ENTRIES }, { workspace, signal }) => {
    const top = await workspace.list(path);
    if (!top.ok) return failure(top.code, top.message);
    const limit = Math.min(maxEntries, MAX_ENTRIES);
    const entries: Entry[] = [];
    const cut = { truncated: false };
    const visit = async (folder: string, names: readonly DirectoryEntry[], depth: number): Promise<void> => {
      for (const { name, type, sizeBytes } of [...names].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        if (entries.length >= limit) {
          cut.truncated = true;
          return;
        }
        signal.throwIfAborted();
        const child = folder === "" ? name : `${folder}/${name}`;
        entries.push({ path: child, type, ...(sizeBytes === undefined ? {} : { sizeBytes }) });
        if (recursive && type === "directory" && depth < MAX_LIST_DEPTH && !NOT_ENTERED.has(name)) {
          const below = await workspace.list(child);
          if (below.ok) await visit(child, below.entries, depth + 1);
        }
      }
    };
    await visit(top.relative, top.entries, 1);
    const { truncated } = cut;
    const note = truncated
      ? `Only the first ${limit} entries are listed. List a folder below, or raise maxEntries (at most ${MAX_ENTRIES}).`
      : entries.length === 0
        ? "The folder is empty."
        : undefined;
    return result({ path: top.relative === "" ? "." : top.relative, entries, truncated, ...(note === undefined ? {} : { note }) });
  },
});
