import type { PinnedToolset } from "@tapedeck/protocol";
import { EngineError } from "../errors.js";
import { SEARCH_LIMIT, ToolSearch } from "../toolset/tool-search.js";
import type { BoundTable } from "./direct-binding.js";
import type { DirectFailure } from "./failure-text.js";
import { TOOL_FIND, TOOL_FIND_MAX } from "./own-tools.js";

/**
 * `tool_find({ names?, query? })`: which lazy tools a call loads — by exact model name, or the
 * best matches of a query (BM25, the toolset's `ToolSearch`), at most `TOOL_FIND_MAX` — and the
 * loaded set of a session, which is a pure function of its recorded `tool_find` results (so it
 * is rebuilt from the journal after a restart, and the same journal always loads the same tools).
 *
 * Invariants:
 * - A `ToolFindRecord` is what the journal records as the outcome of a `tool_find` call: the
 *   model names it loaded, in order. It is computed once, when the call is made; replaying the
 *   session reads it back and never searches again (a new search ranking cannot change history).
 * - `loadedTools` keeps only names that are lazy tools of the current table: a tool that a later
 *   binding removed (or made eager) is not "loaded".
 */

export interface ToolFindRecord {
  /** Model names of the lazy tools this call loaded (some may have been loaded before), in order. */
  readonly loaded: readonly string[];
  /** Names asked for that are no lazy tool of the table (kept to tell the model). */
  readonly unknown?: readonly string[];
}

export type ToolFindOutcome = { readonly ok: true; readonly record: ToolFindRecord } | { readonly ok: false; readonly failure: DirectFailure };

/** Resolves a `tool_find` call of the model against `table`'s lazy tools. */
export function findTools(input: unknown, table: BoundTable, toolset: PinnedToolset): ToolFindOutcome {
  const args = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : undefined;
  const names = args?.names;
  const query = args?.query;
  const namesOk = names === undefined || (Array.isArray(names) && names.every((n) => typeof n === "string"));
  if (args === undefined || !namesOk || (query !== undefined && typeof query !== "string") || (names === undefined && query === undefined)) {
    return invalid(
      `give "names" (an array of tool names) or "query" (what you need, in words), e.g. { "names": ["github_create_issue"] } or { "query": "create an issue" }`,
    );
  }
  const loaded: string[] = [];
  const unknown: string[] = [];
  const add = (name: string) => {
    if (!loaded.includes(name) && loaded.length < TOOL_FIND_MAX) loaded.push(name);
  };
  for (const name of names ?? []) {
    const tool = table.tools.get(name);
    if (tool?.lazy) add(name);
    else if (tool === undefined && !table.own.has(name)) unknown.push(name);
  }
  if (typeof query === "string" && query.trim() !== "") {
    try {
      const byPath = new Map([...table.tools.values()].filter((t) => t.lazy).map((t) => [t.names.path, t.names.modelName]));
      for (const hit of ToolSearch.of(toolset).search(query, { limit: SEARCH_LIMIT.max })) {
        const name = byPath.get(hit.tool);
        if (name !== undefined) add(name);
      }
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      return invalid(`the query has no words to search for: describe the tool you need, e.g. { "query": "send a message to a slack channel" }`);
    }
  }
  return { ok: true, record: { loaded, ...(unknown.length > 0 ? { unknown } : {}) } };
}

function invalid(message: string): ToolFindOutcome {
  return { ok: false, failure: { kind: "invalid_arguments", tool: TOOL_FIND, problems: [{ path: "/", message }] } };
}

/** The lazy tools loaded in a session: the union of its recorded `tool_find` results, in first-load order, that `table` still has as lazy tools. */
export function loadedTools(records: readonly ToolFindRecord[], table: BoundTable): readonly string[] {
  const loaded = new Set<string>();
  for (const record of records) for (const name of record.loaded) if (table.tools.get(name)?.lazy) loaded.add(name);
  return [...loaded];
}

/** The failure for calling `name` before it is loaded, or `undefined` when it may be called (eager, or loaded). */
export function unloadedCall(name: string, table: BoundTable, loaded: readonly string[]): DirectFailure | undefined {
  const tool = table.tools.get(name);
  if (tool === undefined || !tool.lazy || loaded.includes(name)) return undefined;
  return { kind: "not_loaded", tool: name };
}

/** What a `tool_find` call tells the model when definitions are given as text (the `menu` lowering, and whenever nothing was found). */
export function toolFindText(record: ToolFindRecord, table: BoundTable): string {
  const lines: string[] = [];
  if (record.loaded.length > 0) {
    lines.push(`Loaded ${record.loaded.length} tool${record.loaded.length === 1 ? "" : "s"}; you can call ${record.loaded.length === 1 ? "it" : "them"} now:`);
    for (const name of record.loaded) {
      const definition = table.tools.get(name)!.definition;
      lines.push(`- ${name}: ${definition.description}\n  input schema: ${JSON.stringify(definition.inputSchema)}`);
    }
  } else {
    lines.push(`No tool matched. Call ${TOOL_FIND} again with other words, or with exact names from the list in its description.`);
  }
  if (record.unknown !== undefined) lines.push(`No lazy tool is named ${record.unknown.map((n) => `"${n}"`).join(", ")}.`);
  return lines.join("\n");
}
