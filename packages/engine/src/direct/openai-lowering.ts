import type { BoundTable } from "./direct-binding.js";
import type { DirectFailure } from "./failure-text.js";
import { menuDefinitions } from "./menu-lowering.js";
import { TOOL_FIND, TOOL_FIND_INPUT_SCHEMA, TOOL_FIND_MAX, type ModelToolDefinition } from "./own-tools.js";
import type { ToolFindRecord } from "./tool-find.js";

/**
 * The tools of an OpenAI Responses request, and the answer to its tool search. The `openai`
 * package's types (6.x) support deferred loading on Responses: a function tool may carry
 * `defer_loading: true`, a `tool_search` tool may be executed by the client
 * (`execution: "client"`, with our own description and parameters), the model then emits a
 * `tool_search_call` item and the client answers with a `tool_search_output` item whose `tools`
 * are the loaded definitions. Under the `openai` lowering that is what the request gets: every
 * tool, the lazy ones deferred (the model sees their names and descriptions, not their
 * parameters, per OpenAI's guide), and a client-executed `tool_search` taking `tool_find`'s
 * arguments — so that the search is ours (BM25 over the toolset, journaled, replayable) rather
 * than the server's. Under another lowering, and on Chat Completions (no deferred loading in its
 * types), the menu.
 *
 * The types are structural; a type test checks them against the `openai` package's
 * `FunctionTool`, `ToolSearchTool`, `ResponseToolSearchCall` and `ResponseToolSearchOutputItemParam`.
 */

/** `OpenAI.Responses.FunctionTool`. */
export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean | null;
  defer_loading?: boolean;
}

/** `OpenAI.Responses.ToolSearchTool`, executed by the client. */
export interface ResponsesToolSearchTool {
  type: "tool_search";
  execution: "client";
  description: string;
  parameters: Record<string, unknown>;
}

export type ResponsesTool = ResponsesFunctionTool | ResponsesToolSearchTool;

/** The model's `tool_search_call` item, as far as answering it needs. */
export interface ResponsesToolSearchCall {
  readonly type: "tool_search_call";
  readonly call_id: string | null;
  readonly arguments: unknown;
  readonly execution?: "server" | "client";
}

/** `OpenAI.Responses.ResponseToolSearchOutputItemParam`. */
export interface ResponsesToolSearchOutput {
  type: "tool_search_output";
  call_id: string | null;
  execution: "client";
  status: "completed";
  tools: ResponsesFunctionTool[];
}

const TOOL_SEARCH_DESCRIPTION =
  `Searches the deferred tools and loads their full definitions so that you can call them: give their exact names (at most ${TOOL_FIND_MAX}) ` +
  `or describe what you need in words. Call it before calling a deferred tool.`;

export function responsesTools(table: BoundTable, loaded: readonly string[]): ResponsesTool[] {
  if (table.binding.lazy?.lowering !== "openai") return menuDefinitions(table, loaded).map((d) => functionTool(d));
  const byName = (a: ModelToolDefinition, b: ModelToolDefinition) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const tools = [...table.tools.values()];
  const eager = tools.filter((t) => !t.lazy).map((t) => functionTool(t.definition));
  const deferred = tools
    .filter((t) => t.lazy)
    .map((t) => t.definition)
    .sort(byName)
    .map((d) => functionTool(d, true));
  // `tool_find` itself is replaced by the API's own tool search; `fetch_blob` stays a function.
  const own = [...table.own.values()].filter((d) => d.name !== TOOL_FIND).map((d) => functionTool(d));
  const search: ResponsesToolSearchTool = {
    type: "tool_search",
    execution: "client",
    description: TOOL_SEARCH_DESCRIPTION,
    parameters: TOOL_FIND_INPUT_SCHEMA,
  };
  return [...eager.sort((a, b) => (a.name < b.name ? -1 : 1)), ...own, ...deferred, search];
}

/** The arguments of a `tool_search_call` as `tool_find`'s (an object, or its JSON text); a failure when they are neither. */
export function toolSearchArguments(call: ResponsesToolSearchCall): { ok: true; input: unknown } | { ok: false; failure: DirectFailure } {
  if (typeof call.arguments !== "string") return { ok: true, input: call.arguments };
  try {
    return { ok: true, input: JSON.parse(call.arguments) as unknown };
  } catch {
    return { ok: false, failure: { kind: "invalid_arguments", tool: "tool_search", problems: [{ path: "/", message: "is not JSON" }] } };
  }
}

/** The `tool_search_output` item answering `call` with the definitions `record` loaded. */
export function toolSearchOutput(call: ResponsesToolSearchCall, record: ToolFindRecord, table: BoundTable): ResponsesToolSearchOutput {
  const tools = record.loaded.flatMap((name) => {
    const tool = table.tools.get(name);
    return tool ? [functionTool(tool.definition)] : [];
  });
  return { type: "tool_search_output", call_id: call.call_id, execution: "client", status: "completed", tools };
}

function functionTool(definition: ModelToolDefinition, deferred = false): ResponsesFunctionTool {
  return {
    type: "function",
    name: definition.name,
    description: definition.description,
    parameters: definition.inputSchema,
    strict: false,
    ...(deferred ? { defer_loading: true } : {}),
  };
}
