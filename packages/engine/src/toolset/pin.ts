import type { McpServerRecipe, PinnedTool, PinnedToolset, ToolsetSpec } from "@tapedeck/protocol";
import type { McpToolSource } from "../sources/mcp/mcp-tool-source.js";
import { pinHttpTool } from "../sources/http/http-tool.js";
import { pinMcpServers, type McpOverride } from "./pin-mcp.js";
import { canonicalJson } from "../util/canonical-json.js";
import { sha256Hex } from "../util/ids.js";
import { resolvePolicy } from "./policy.js";
import { checkPolicyTargets } from "./toolset-file.js";

/**
 * Pins a toolset: the exact tools (schemas, descriptions, resolved policies) a run will use
 * for its whole life. The id is `ts_` + SHA-256 of the RFC 8785 canonical JSON of the pinned
 * tools, so the same toolset always gets the same id and any change gets a new one.
 */
export async function pinToolset(
  spec: ToolsetSpec,
  mcp: McpToolSource,
  overrides: Readonly<Record<string, McpOverride>> = {},
): Promise<{ toolset: PinnedToolset; warnings: string[] }> {
  const policies = spec.policies ?? {};
  const remote = spec.mcpServers ? await pinMcpServers(spec.mcpServers, policies, mcp, overrides) : { tools: [], servers: {}, warnings: [] };
  const tools: PinnedTool[] = [...remote.tools];
  for (const [group, byName] of Object.entries(spec.hostTools ?? {})) {
    for (const [name, tool] of Object.entries(byName)) {
      tools.push({
        group,
        name,
        source: "host",
        description: tool.description ?? "",
        inputSchema: tool.inputSchema ?? { type: "object" },
        ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
        policy: resolvePolicy(group, name, policies),
      });
    }
  }
  // The built-in `http.fetch` is pinned like any tool, its allow-list with it: the toolset id covers it.
  if (spec.http) tools.push(pinHttpTool(spec.http.allow, policies));
  checkPolicyTargets(policies, tools);
  return { toolset: toolsetOf(tools, remote.servers), warnings: remote.warnings };
}

/** A toolset of exactly these tools (and the servers they call), sorted, with its content address. */
export function toolsetOf(tools: readonly PinnedTool[], servers: Readonly<Record<string, McpServerRecipe>> = {}): PinnedToolset {
  const sorted = [...tools].sort((a, b) => compare(a.group, b.group) || compare(a.name, b.name));
  const hasServers = Object.keys(servers).length > 0;
  const pinned = hasServers ? { tools: sorted, servers } : { tools: sorted };
  const id = `ts_${sha256Hex(canonicalJson(JSON.parse(JSON.stringify(hasServers ? pinned : sorted)) as never))}`;
  return { id, ...pinned };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
