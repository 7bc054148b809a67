import { defineTool, failure, result, type LibraryTool } from "../library-tool.js";
import { EXCERPT_CHARS } from "./memory-space.js";

/**
 * `memory.write`, `memory.read`, `memory.tree`, `memory.search`: a namespace's long-term notes,
 * kept in the store (not the workspace) and indexed for search as they are written. The search
 * tool's description depends on whether an embeddings endpoint is configured: the model is told
 * the truth about what search can find.
 */

/** Results of a search by default and at most. */
export const DEFAULT_RESULTS = 5;
export const MAX_RESULTS = 20;
/** Entries of a tree at most. */
export const MAX_TREE_ENTRIES = 1_000;
/** Characters a read returns at most. */
export const MAX_READ_CHARS = 100_000;

// IronClaw's defaults for memory writes: 20 a minute, 200 an hour. Reads are cheap and frequent.
const WRITE_LIMIT = { perMinute: 20, perHour: 200 };
const READ_LIMIT = { perMinute: 120, perHour: 1_200 };

const PATH = { type: "string", minLength: 1, description: 'A document path such as "projects/alpha/notes.md" (folders separated by /).' };

const writeTool = defineTool<{ path: string; content: string; mode?: "write" | "append" }, "memory">({
  name: "write",
  description:
    "Saves a document in long-term memory: `write` (default) replaces it, `append` adds to its end on a new line. " +
    "It is indexed at once for memory.search. Use it for facts, decisions and preferences worth remembering in later conversations.",
  inputSchema: {
    type: "object",
    properties: { path: PATH, content: { type: "string" }, mode: { type: "string", enum: ["write", "append"] } },
    required: ["path", "content"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      path: { type: "string" },
      version: { type: "integer" },
      chunks: { type: "integer", description: "Search chunks the document is indexed as." },
      embedded: { type: "boolean", description: "Whether similarity search covers it too." },
      note: { type: "string" },
    },
    required: ["path", "version", "chunks", "embedded"],
    additionalProperties: false,
  },
  risk: "medium",
  approval: { kind: "never" },
  rateLimit: WRITE_LIMIT,
  needs: ["memory"],
  execute: async ({ path, content, mode = "write" }, { memory, now, signal }) => {
    const written = await memory.write(path, content, mode === "append", now(), signal);
    if (!written.ok) return failure(written.code, written.message);
    const { ok: _ok, ...value } = written;
    return result(value);
  },
});

const readTool = defineTool<{ path: string; offset?: number }, "memory">({
  name: "read",
  description: `Reads a memory document whole (up to ${MAX_READ_CHARS} characters from \`offset\`; the result says where to read on).`,
  inputSchema: {
    type: "object",
    properties: { path: PATH, offset: { type: "integer", minimum: 0, description: "Characters to skip. Default 0." } },
    required: ["path"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      path: { type: "string" },
      content: { type: "string" },
      version: { type: "integer" },
      updatedAt: { type: "string", description: "ISO 8601." },
      totalChars: { type: "integer" },
      nextOffset: { type: "integer", description: "Present when more follows." },
    },
    required: ["path", "content", "version", "updatedAt", "totalChars"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  rateLimit: READ_LIMIT,
  needs: ["memory"],
  execute: async ({ path, offset = 0 }, { memory }) => {
    const document = await memory.read(path);
    if ("ok" in document) return failure(document.code, document.message);
    const start = Math.min(offset, document.content.length);
    const end = Math.min(start + MAX_READ_CHARS, document.content.length);
    return result({
      path: document.path,
      content: document.content.slice(start, end),
      version: document.version,
      updatedAt: new Date(document.updatedAt).toISOString(),
      totalChars: document.content.length,
      ...(end < document.content.length ? { nextOffset: end } : {}),
    });
  },
});

const treeTool = defineTool<{ path?: string; recursive?: boolean }, "memory">({
  name: "tree",
  description: "Lists memory: the documents and folders in a folder (default: the top), or with recursive every document below it, sorted by path.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: 'A folder ("projects"); default the top.' },
      recursive: { type: "boolean", description: "Default false." },
    },
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      entries: {
        type: "array",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            type: { type: "string", enum: ["document", "folder"] },
            sizeChars: { type: "integer" },
            documents: { type: "integer", description: "Folders: documents below it." },
          },
          required: ["path", "type"],
          additionalProperties: false,
        },
      },
      truncated: { type: "boolean" },
    },
    required: ["entries", "truncated"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  rateLimit: READ_LIMIT,
  needs: ["memory"],
  execute: async ({ path = "", recursive = false }, { memory }) => {
    const folder = path.replace(/^\.?\/*|\/+$/g, "");
    const listed = await memory.list(folder, MAX_TREE_ENTRIES + 1);
    if ("ok" in listed) return failure(listed.code, listed.message);
    const truncated = listed.length > MAX_TREE_ENTRIES;
    const documents = listed.slice(0, MAX_TREE_ENTRIES);
    if (recursive) return result({ entries: documents.map((d) => ({ path: d.path, type: "document", sizeChars: d.sizeChars })), truncated });
    const base = folder === "" ? 0 : folder.length + 1;
    const entries = new Map<string, { path: string; type: "document" | "folder"; sizeChars?: number; documents?: number }>();
    for (const document of documents) {
      const rest = document.path.slice(base);
      const slash = rest.indexOf("/");
      if (slash < 0) entries.set(document.path, { path: document.path, type: "document", sizeChars: document.sizeChars });
      else {
        const child = document.path.slice(0, base + slash);
        const entry = entries.get(`${child}/`) ?? { path: child, type: "folder", documents: 0 };
        entry.documents = (entry.documents ?? 0) + 1;
        entries.set(`${child}/`, entry);
      }
    }
    return result({ entries: [...entries.values()], truncated });
  },
});

function searchTool(hybrid: boolean) {
  const how = hybrid
    ? "Hybrid search: full-text (BM25) and meaning (embeddings), merged by reciprocal rank fusion, so it also finds notes that say the same thing in other words."
    : "Full-text search only (BM25; words are matched after stemming, so 'deploys' finds 'deployed'): no embeddings are configured, so it does NOT find " +
      "synonyms or paraphrases — search with the words the notes are likely to use, and try other words if nothing fits.";
  return defineTool<{ query: string; limit?: number }, "memory">({
    name: "search",
    description: `Searches long-term memory. ${how} Returns the best documents, each with the passage that matched (up to ${EXCERPT_CHARS} characters); memory.read gives the whole document.`,
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1 },
        limit: { type: "integer", minimum: 1, maximum: MAX_RESULTS, description: `Documents to return. Default ${DEFAULT_RESULTS}.` },
      },
      required: ["query"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        results: {
          type: "array",
          items: {
            type: "object",
            properties: { path: { type: "string" }, chunk: { type: "integer" }, score: { type: "number" }, excerpt: { type: "string" } },
            required: ["path", "chunk", "score", "excerpt"],
            additionalProperties: false,
          },
        },
        mode: { type: "string", enum: ["hybrid", "full_text"] },
        note: { type: "string" },
      },
      required: ["results", "mode"],
      additionalProperties: false,
    },
    risk: "low",
    approval: { kind: "never" },
    rateLimit: READ_LIMIT,
    needs: ["memory"],
    execute: async ({ query, limit = DEFAULT_RESULTS }, { memory, signal }) => {
      const found = await memory.search(query, Math.min(limit, MAX_RESULTS), signal);
      return result({ results: [...found.hits], mode: found.mode, ...(found.note === undefined ? {} : { note: found.note }) });
    },
  });
}

/** The memory tools; `embeddings`: an embeddings endpoint is configured (it changes what search says it does). */
export function memoryTools(options: { readonly embeddings: boolean }): readonly LibraryTool<"memory">[] {
  return [writeTool, readTool, treeTool, searchTool(options.embeddings)];
}
