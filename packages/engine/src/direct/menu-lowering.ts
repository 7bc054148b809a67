import type { BoundTable } from "./direct-binding.js";
import type { ModelToolDefinition } from "./own-tools.js";

/**
 * The tools of a request under the `menu` lowering, for any model API (and what the other
 * lowerings fall back to on an API without native deferred loading, such as Chat Completions):
 * the eager tools, then direct mode's own tools (`tool_find`, whose description is the menu, and
 * `fetch_blob`), then the lazy tools loaded so far, in the order they were loaded.
 *
 * Invariant: loading a tool only appends to the list, so the prefix of the tools block — and a
 * prompt cache keyed on it — stays the same up to the first loaded tool. (It still changes the
 * tools block: seed 002 measured that as the cost of the menu; the native lowerings avoid it.)
 */
export function menuDefinitions(table: BoundTable, loaded: readonly string[]): ModelToolDefinition[] {
  const eager = [...table.tools.values()].filter((t) => !t.lazy).map((t) => t.definition);
  eager.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const own = [...table.own.values()];
  const lazy = loaded.flatMap((name) => {
    const tool = table.tools.get(name);
    return tool?.lazy ? [tool.definition] : [];
  });
  return [...eager, ...own, ...lazy];
}

/** A tool as OpenAI Chat Completions takes it (`OpenAI.Chat.ChatCompletionFunctionTool`). */
export interface ChatFunctionTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Chat Completions has no deferred loading (the `openai` package's types have no `defer_loading` there): always the menu. */
export function chatTools(table: BoundTable, loaded: readonly string[]): ChatFunctionTool[] {
  return menuDefinitions(table, loaded).map((d) => ({ type: "function", function: { name: d.name, description: d.description, parameters: d.inputSchema } }));
}
