import type { BoundTable } from "./direct-binding.js";
import { menuDefinitions } from "./menu-lowering.js";
import type { ModelToolDefinition } from "./own-tools.js";
import { toolFindText, type ToolFindRecord } from "./tool-find.js";
import type { AnthropicToolResult } from "./result-blocks.js";

/**
 * The tools of an Anthropic Messages request, and `tool_find`'s answer there. Under the
 * `anthropic` lowering every tool is in the request from the first turn, the lazy ones with
 * `defer_loading: true` (their definitions are not part of the prompt until loaded), and
 * `tool_find` answers with `tool_reference` blocks: loading a tool changes neither the tools
 * block nor the prompt prefix, so the prompt cache stays warm. Under another lowering, the menu.
 *
 * Rules of Anthropic's API this keeps (seed 002's notes; a break is a 400):
 * - a `tool_result` holding `tool_reference` blocks holds nothing else (no text next to them);
 * - not every tool is deferred: `tool_find` (and `fetch_blob`) never are;
 * - no `cache_control` on a deferred tool: none is set here, and the deferred tools come first,
 *   so a harness that marks the last tool of the list for caching marks an eager one.
 * The types are structural; a type test checks them against `@anthropic-ai/sdk`'s `Tool`,
 * `ToolReferenceBlockParam` and `ToolResultBlockParam`.
 */

/** `Anthropic.Messages.Tool`. */
export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: { type: "object"; [key: string]: unknown };
  defer_loading?: boolean;
}

export interface AnthropicToolReference {
  type: "tool_reference";
  tool_name: string;
}

/** A `tool_result` whose content is `tool_reference` blocks only. */
export interface AnthropicToolFindResult extends Omit<AnthropicToolResult, "content"> {
  content: string | AnthropicToolReference[];
}

export function anthropicTools(table: BoundTable, loaded: readonly string[]): AnthropicToolDefinition[] {
  if (table.binding.lazy?.lowering !== "anthropic") return menuDefinitions(table, loaded).map((d) => anthropicTool(d));
  const byName = (a: ModelToolDefinition, b: ModelToolDefinition) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const tools = [...table.tools.values()];
  const deferred = tools.filter((t) => t.lazy).map((t) => t.definition);
  const eager = tools.filter((t) => !t.lazy).map((t) => t.definition);
  return [
    ...deferred.sort(byName).map((d) => anthropicTool(d, true)),
    ...eager.sort(byName).map((d) => anthropicTool(d)),
    ...[...table.own.values()].map((d) => anthropicTool(d)),
  ];
}

/** `tool_find`'s `tool_result` on Anthropic: `tool_reference` blocks for what it loaded (the `anthropic` lowering), text otherwise. */
export function anthropicToolFindResult(toolUseId: string, record: ToolFindRecord, table: BoundTable): AnthropicToolFindResult {
  const native = table.binding.lazy?.lowering === "anthropic" && record.loaded.length > 0;
  const content = native ? record.loaded.map((name): AnthropicToolReference => ({ type: "tool_reference", tool_name: name })) : toolFindText(record, table);
  return { type: "tool_result", tool_use_id: toolUseId, content };
}

function anthropicTool(definition: ModelToolDefinition, deferred = false): AnthropicToolDefinition {
  const schema = { ...definition.inputSchema, type: "object" as const };
  return { name: definition.name, description: definition.description, input_schema: schema, ...(deferred ? { defer_loading: true } : {}) };
}
