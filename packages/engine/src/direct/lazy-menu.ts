import type { PinnedTool } from "@tapedeck/protocol";
import type { CheckedDirectOptions } from "./direct-options.js";
import { TOOL_FIND, TOOL_FIND_INPUT_SCHEMA, TOOL_FIND_MAX, type ModelToolDefinition } from "./own-tools.js";
import { cutText } from "./summary-template.js";
import { globMatchesTool, type ToolNames } from "./tool-glob.js";

/**
 * Which tools are lazy, and the `menu` lowering: instead of every definition, the model gets one
 * line per lazy tool (its model name and the first sentence of its description, at most
 * `MENU_LINE_MAX` characters) inside the description of `tool_find`, and loads up to 20 full
 * definitions by calling it. The menu is in the tools block, not in the system prompt, so a
 * harness need not change its prompt, and it sits in the cached prefix: it does not change
 * while the binding does not.
 *
 * Invariants: every menu line is at most `MENU_LINE_MAX` characters, has no line break, and
 * starts with the tool's model name; lines are in model-name order (a stable prefix).
 */

/** Seed 002: a one-line summary is enough to choose by; 200 lines cost about 10k tokens. */
export const MENU_LINE_MAX = 160;

/** Whether `tool` is lazy under `lazy` (tools matching one of its globs; only read-only ones when `readOnly`). */
export function isLazyTool(lazy: CheckedDirectOptions["lazy"], tool: PinnedTool, names: ToolNames): boolean {
  if (lazy === null) return false;
  if (lazy.readOnly && tool.annotations?.readOnlyHint !== true) return false;
  return lazy.tools.some((glob) => globMatchesTool(glob, names));
}

/** The menu line of a tool: `name: first sentence of its description`, one line, ≤ 160 characters. */
export function menuLine(modelName: string, description: string): string {
  const flat = description.replace(/\s+/g, " ").trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  return cutText(sentence === "" ? modelName : `${modelName}: ${sentence}`, MENU_LINE_MAX);
}

/** `tool_find` for a lowering whose model sees the deferred tools' names elsewhere (Anthropic, OpenAI): no menu. */
export function toolFindDefinition(menu?: readonly string[]): ModelToolDefinition {
  const intro =
    `Loads the full definitions of tools you do not have yet, so that you can call them: give their exact names (at most ${TOOL_FIND_MAX}), ` +
    `or describe what you need in words and get the ${TOOL_FIND_MAX} best matches. Call it before calling any tool that is not loaded.`;
  const description = menu === undefined ? intro : `${intro}\nTools you can load:\n${menu.join("\n")}`;
  return { name: TOOL_FIND, description, inputSchema: TOOL_FIND_INPUT_SCHEMA };
}

/** The `menu` lowering's `tool_find`: its description lists every lazy tool, one line each, in name order. */
export function menuToolFind(lazyTools: readonly { readonly modelName: string; readonly description: string }[]): ModelToolDefinition {
  const lines = [...lazyTools]
    .sort((a, b) => (a.modelName < b.modelName ? -1 : a.modelName > b.modelName ? 1 : 0))
    .map((t) => menuLine(t.modelName, t.description));
  return toolFindDefinition(lines);
}
