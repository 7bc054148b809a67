import type { ResponsesFunctionTool, ResponsesNamespaceTool, ResponsesTool, ResponsesToolSearchTool } from "@tapedeck/protocol";
import type { BoundTable } from "./direct-binding.js";
import type { DirectFailure } from "./failure-text.js";
import { menuDefinitions } from "./menu-lowering.js";
import { TOOL_FIND, TOOL_FIND_INPUT_SCHEMA, TOOL_FIND_MAX, type ModelToolDefinition } from "./own-tools.js";
import type { ToolFindRecord } from "./tool-find.js";
import { toolNamespaces } from "./tool-namespaces.js";

/**
 * The tools of an OpenAI Responses request, and the answer to its tool search. The `openai`
 * package's types (6.x) support deferred loading on Responses: a function may carry
 * `defer_loading: true`, functions may be grouped under a `namespace` tool, a `tool_search` tool
 * may be executed by the client (`execution: "client"`, with our own description and
 * parameters), the model then emits a `tool_search_call` item and the client answers with a
 * `tool_search_output` item whose `tools` are the loaded definitions; a `function_call` of a
 * namespaced function carries its `namespace`.
 *
 * Under the `openai` lowering that is what the request gets: the eager tools as top-level
 * functions, the lazy ones deferred inside one namespace per toolset group
 * (`tool-namespaces.ts`), and a client-executed `tool_search` taking `tool_find`'s arguments — so
 * that the search is ours (BM25 over the toolset, journaled, replayable) rather than the
 * server's. Namespaces because OpenAI's tool search guide says to use them where possible ("our
 * models have primarily been trained to search those surfaces, and token savings are usually
 * more material there"): `defer_loading` applies to the functions inside, and at the start the
 * model sees only each namespace's name and description. `tool_search_output` gives the loaded
 * functions back inside their namespaces. Under another lowering, and on Chat Completions (no
 * deferred loading in its types), the menu.
 *
 * The types are structural; a type test checks them against the `openai` package's
 * `FunctionTool`, `NamespaceTool`, `ToolSearchTool`, `ResponseToolSearchCall` and
 * `ResponseToolSearchOutputItemParam`.
 */

export type { ResponsesFunctionTool, ResponsesNamespaceTool, ResponsesTool, ResponsesToolSearchTool };

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
  tools: (ResponsesFunctionTool | ResponsesNamespaceTool)[];
}

const TOOL_SEARCH_DESCRIPTION =
  `Searches the deferred tools of the namespaces and loads their full definitions so that you can call them: give their exact names (at most ${TOOL_FIND_MAX}) ` +
  `or describe what you need in words. Call it before calling a deferred tool.`;

export function responsesTools(table: BoundTable, loaded: readonly string[]): ResponsesTool[] {
  if (table.binding.lazy?.lowering !== "openai") return menuDefinitions(table, loaded).map((d) => functionTool(d));
  const eager = [...table.tools.values()]
    .filter((t) => !t.lazy)
    .map((t) => functionTool(t.definition))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // `tool_find` itself is replaced by the API's own tool search; `fetch_blob` stays a function.
  const own = [...table.own.values()].filter((d) => d.name !== TOOL_FIND).map((d) => functionTool(d));
  const namespaces = toolNamespaces(table).list.map((n): ResponsesNamespaceTool => ({
    type: "namespace",
    name: n.name,
    description: n.description,
    tools: n.tools.map((t) => functionTool(t.definition, true)),
  }));
  const search: ResponsesToolSearchTool = {
    type: "tool_search",
    execution: "client",
    description: TOOL_SEARCH_DESCRIPTION,
    parameters: TOOL_FIND_INPUT_SCHEMA,
  };
  return [...eager, ...own, ...namespaces, search];
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

/**
 * The `tool_search_output` item answering `call` with the definitions `record` loaded: each
 * lazy tool inside its namespace (one namespace item per namespace, in the order of its first
 * loaded tool), without `defer_loading`.
 */
export function toolSearchOutput(call: ResponsesToolSearchCall, record: ToolFindRecord, table: BoundTable): ResponsesToolSearchOutput {
  const { byTool } = toolNamespaces(table);
  const tools: (ResponsesFunctionTool | ResponsesNamespaceTool)[] = [];
  const opened = new Map<string, ResponsesNamespaceTool>();
  for (const name of record.loaded) {
    const tool = table.tools.get(name);
    if (tool === undefined) continue;
    const namespace = byTool.get(name);
    if (namespace === undefined) {
      tools.push(functionTool(tool.definition));
      continue;
    }
    let item = opened.get(namespace.name);
    if (item === undefined) {
      item = { type: "namespace", name: namespace.name, description: namespace.description, tools: [] };
      opened.set(namespace.name, item);
      tools.push(item);
    }
    item.tools.push(functionTool(tool.definition));
  }
  return { type: "tool_search_output", call_id: call.call_id, execution: "client", status: "completed", tools };
}

/**
 * A failure when a `function_call` names a namespace its tool is not in: the tool is found by its
 * model name (unique across the table), and the namespace must agree. Nothing when it agrees, when
 * the call names none, or under another lowering (which has no namespaces to name).
 */
export function namespaceMismatch(table: BoundTable, name: string, namespace: string | undefined): DirectFailure | undefined {
  if (namespace === undefined || table.binding.lazy?.lowering !== "openai") return undefined;
  const actual = toolNamespaces(table).byTool.get(name)?.name;
  if (actual === namespace) return undefined;
  return { kind: "wrong_namespace", tool: name, namespace, ...(actual === undefined ? {} : { actual }) };
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
