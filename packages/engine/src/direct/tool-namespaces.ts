import type { BoundTable, BoundTool } from "./direct-binding.js";
import { cutText } from "./summary-template.js";

/**
 * The namespaces of the `openai` lowering: the deferred tools of one toolset group (an MCP
 * server, a host's tools, a library group) under one Responses `namespace` tool, whose name and
 * description are all the model sees of them until `tool_search` loads them (OpenAI's tool
 * search guide: "For a namespace or MCP server, that means the model sees only the namespace or
 * server name and description").
 *
 * Invariants:
 * - A pure function of the table (its tools' groups, model names and laziness): the same binding
 *   always gives the same namespaces, names and descriptions (a stable prompt prefix).
 * - Every lazy tool is in exactly one namespace, its group's; eager tools are in none.
 * - Namespace names match `^[A-Za-z0-9_-]{1,64}$`, are distinct, and are no tool's model name and
 *   no own tool's name (`tool_find`, `fetch_blob`, `tool_search`), so a call's namespace names one
 *   thing. The group's name when it qualifies; else its invalid characters become `_`, it is cut
 *   to 64 characters, and `_2`, `_3`… is appended until it is free.
 * - A description is at most `NAMESPACE_DESCRIPTION_MAX` characters and says only what the
 *   table knows: the group, how many tools, and the first model names in name order (what
 *   `tool_search` takes). No MCP server instructions are pinned in a toolset, so none are quoted.
 * - A tool's model name is unchanged inside its namespace: model names are unique across the
 *   table already, so a call is found by its name; its namespace is checked, not needed.
 */

export const NAMESPACE_DESCRIPTION_MAX = 300;

export interface ToolNamespace {
  readonly name: string;
  readonly group: string;
  readonly description: string;
  /** Its lazy tools, in model-name order. */
  readonly tools: readonly BoundTool[];
}

export interface ToolNamespaces {
  /** In namespace-name order. */
  readonly list: readonly ToolNamespace[];
  /** The namespace of each lazy tool, by model name. */
  readonly byTool: ReadonlyMap<string, ToolNamespace>;
}

const VALID = /^[A-Za-z0-9_-]{1,64}$/;
const RESERVED = ["tool_search"];

export function toolNamespaces(table: BoundTable): ToolNamespaces {
  const byGroup = new Map<string, BoundTool[]>();
  for (const tool of table.tools.values()) {
    if (!tool.lazy) continue;
    const group = byGroup.get(tool.tool.group);
    if (group === undefined) byGroup.set(tool.tool.group, [tool]);
    else group.push(tool);
  }
  const taken = new Set<string>([...table.tools.keys(), ...table.own.keys(), ...RESERVED]);
  const groups = [...byGroup.keys()].sort(byText);
  const list: ToolNamespace[] = [];
  // Groups whose name qualifies take it first, so a rewritten name never takes a real group's.
  const names = new Map<string, string>();
  for (const group of groups) {
    if (VALID.test(group) && !taken.has(group)) {
      names.set(group, group);
      taken.add(group);
    }
  }
  for (const group of groups) {
    if (names.has(group)) continue;
    const base = group.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "tools";
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 64 - `_${n}`.length)}_${n}`;
    names.set(group, name);
    taken.add(name);
  }
  const byTool = new Map<string, ToolNamespace>();
  for (const group of groups) {
    const tools = byGroup.get(group)!.sort((a, b) => byText(a.names.modelName, b.names.modelName));
    const namespace: ToolNamespace = { name: names.get(group)!, group, description: describe(group, tools), tools };
    list.push(namespace);
    for (const tool of tools) byTool.set(tool.names.modelName, namespace);
  }
  list.sort((a, b) => byText(a.name, b.name));
  return { list, byTool };
}

/** `The "github" tools (42), loaded with tool_search: github_add_comment, github_create_issue, … and 39 more.` */
function describe(group: string, tools: readonly BoundTool[]): string {
  const source = tools.every((t) => t.tool.source === "mcp") ? `MCP server ${JSON.stringify(group)}` : `group ${JSON.stringify(group)}`;
  const head = `Tools of ${source} (${tools.length}), loaded with tool_search: `;
  const tail = (rest: number) => (rest > 0 ? `, … and ${rest} more.` : ".");
  const names: string[] = [];
  for (const tool of tools) {
    const next = [...names, tool.names.modelName];
    if ((head + next.join(", ") + tail(tools.length - next.length)).length > NAMESPACE_DESCRIPTION_MAX) break;
    names.push(tool.names.modelName);
  }
  return cutText(head + names.join(", ") + tail(tools.length - names.length), NAMESPACE_DESCRIPTION_MAX);
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
