import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson } from "../util/canonical-json.js";

/**
 * Which tools of an MCP server's list may be pinned. The list comes from outside Tapedeck, and
 * a broken or hostile server can list a name twice (the declarations would show both, and a
 * call would reach whichever the server picks), or names that cannot be declared or called
 * safely: `then` (a group with it is a thenable), `__proto__` or `constructor` (members of
 * every object), an empty name, a newline or a quote (they break out of the lines a model reads).
 *
 * Invariants:
 * - A name is pinned only if it has the shape the MCP specification asks of tool names (1 to
 *   128 of `A–Z a–z 0–9 _ - .`) and is not a member of `Object.prototype` nor `then`.
 * - A name listed more than once is pinned once when every listing is the same tool, and not at
 *   all otherwise: which one the server would run is unknown.
 * - A tool whose definition has no canonical JSON form (a lone surrogate in its schema) is
 *   left out: a toolset's id is the digest of that form.
 * - Every tool left out gets one warning that names it (JSON-quoted: a newline or a quote in a
 *   name shows as `\n` or `\"`); the server's other tools are pinned.
 */

/** The MCP specification's tool name shape (2025-11-25, "Tool names"); host tools are held to it too. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Names a tool of a group may not have: a script's `group.<name>` would reach something else. */
const RESERVED_NAMES: ReadonlySet<string> = new Set([
  "then",
  "constructor",
  "__proto__",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "toString",
  "valueOf",
]);

const NOT_A_NAME = "is not a tool name (1 to 128 letters, digits, _, - or ., as the MCP specification asks)";

/** Why a tool's pinned name (its prefix included) cannot be pinned, or undefined when it can. */
export function unsafeToolName(name: string): string | undefined {
  if (!TOOL_NAME.test(name)) return NOT_A_NAME;
  if (RESERVED_NAMES.has(name)) return "is a name every JavaScript object already has, or makes a group a thenable";
  return undefined;
}

export interface ScreenedTools {
  readonly tools: Tool[];
  readonly warnings: string[];
}

/** The tools of `group`'s list that may be pinned, in the server's order, and a warning for each one left out. */
export function screenMcpTools(group: string, listed: readonly Tool[], prefix = ""): ScreenedTools {
  const byName = new Map<string, { readonly tool: Tool; readonly text: string | undefined; copies: number; differs: boolean }>();
  const warnings: string[] = [];
  for (const tool of listed) {
    const text = canonicalText(tool);
    const seen = byName.get(tool.name);
    if (seen) {
      seen.copies += 1;
      seen.differs ||= text === undefined || text !== seen.text;
    } else {
      byName.set(tool.name, { tool, text, copies: 1, differs: false });
    }
  }
  const tools: Tool[] = [];
  for (const [name, entry] of byName) {
    const where = `mcpServers.${group}: the server's tool ${JSON.stringify(name)}`;
    // The server's name is sent as it is; the pinned one (prefixed) is what scripts call.
    const unsafe = TOOL_NAME.test(name) ? unsafeToolName(`${prefix}${name}`) : NOT_A_NAME;
    if (unsafe) warnings.push(`${where} ${unsafe}; it was left out.`);
    else if (entry.copies > 1 && entry.differs)
      warnings.push(`${where} is listed ${entry.copies} times with different definitions; it was left out, since which one the server runs is unknown.`);
    else if (entry.text === undefined) warnings.push(`${where} has a definition with no JSON form (a lone UTF-16 surrogate?); it was left out.`);
    else tools.push(entry.tool);
  }
  return { tools, warnings };
}

/** The tool's canonical JSON, or undefined when it has none. */
function canonicalText(tool: Tool): string | undefined {
  try {
    return canonicalJson(tool as never);
  } catch {
    return undefined;
  }
}
