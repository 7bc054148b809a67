import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject, McpServerRecipe, McpServerSpec, PinnedTool, PolicySpec, ToolPolicy } from "@tapedeck/protocol";
import type { McpToolSource } from "../sources/mcp/mcp-tool-source.js";
import { McpAddressRefusedError } from "../sources/mcp/mcp-address-guard.js";
import { recipeId, recipeOf } from "../sources/mcp/mcp-recipe.js";
import { screenMcpTools, unsafeToolName } from "./mcp-tool-list.js";
import { resolvePolicy } from "./policy.js";
import { ToolsetSpecError } from "./spec-error.js";

/**
 * Pins the tools of a toolset's MCP servers: connects to each, lists every tool (all pages),
 * and keeps name, description, schemas and annotations. A server that cannot be listed fails
 * the registration before anything is written, unless it is `optional` (then: no tools, one
 * warning). A tool whose name is listed twice or cannot be declared safely is left out with a
 * warning naming it (`mcp-tool-list.ts`); the server's other tools are pinned.
 */
/**
 * Changes how one MCP tool is pinned (seed 002's `override`): return a tool to use instead,
 * `false` to leave the tool out, or nothing to keep the default translation. It must be a
 * pure function of its arguments: what it returns is part of the toolset's content address.
 */
export type McpOverride = (tool: PinnedTool, info: Tool) => PinnedTool | false | undefined | void;

/**
 * Which addresses the toolset's Streamable HTTP servers may be reached at: `"any"` for the
 * operator's toolsets, `"public"` for one registered on a tenant's behalf (a key limited to a
 * namespace or labels): the recipes then carry `addresses: "public"`, checked at every
 * connection, registration's included (docs/design/mcp-addresses.md).
 */
export type McpAddresses = "any" | "public";

export interface PinnedMcpServers {
  readonly tools: PinnedTool[];
  readonly servers: Record<string, McpServerRecipe>;
  readonly warnings: string[];
}

export async function pinMcpServers(
  specs: Readonly<Record<string, McpServerSpec>>,
  policies: Readonly<Record<string, PolicySpec>>,
  source: McpToolSource,
  overrides: Readonly<Record<string, McpOverride>> = {},
  addresses: McpAddresses = "any",
): Promise<PinnedMcpServers> {
  const pinned: PinnedMcpServers = { tools: [], servers: {}, warnings: [] };
  await Promise.all(
    Object.entries(specs).map(async ([group, spec]) => {
      const recipe = recipeOf(spec, addresses);
      const id = recipeId(recipe);
      source.addServers({ [id]: recipe });
      let tools: Tool[];
      try {
        tools = await source.connection(id, group).listTools();
      } catch (error) {
        const refused = error instanceof McpAddressRefusedError;
        const why = refused
          ? `mcpServers.${group}: ${error.message.replace(/\.$/, "")}`
          : `mcpServers.${group}: cannot list the server's tools: ${(error as Error).message}`;
        if (refused && !spec.optional) throw new ToolsetSpecError(`${why}.`);
        if (!spec.optional) throw new ToolsetSpecError(`${why}. Check the server, or mark it "optional": true to register without it.`);
        pinned.warnings.push(`${why}; it is optional, so the toolset has none of its tools.`);
        return;
      }
      pinned.servers[id] = recipe;
      const screened = screenMcpTools(group, tools, spec.prefix);
      pinned.warnings.push(...screened.warnings);
      const override = Object.hasOwn(overrides, group) ? overrides[group] : undefined;
      const names = new Set<string>();
      for (const tool of screened.tools) {
        const translated = pinTool(group, id, spec, tool, policies);
        const overridden = override?.(translated, tool);
        if (overridden === false) continue;
        const final: PinnedTool = overridden ? { ...overridden, group, source: "mcp", remote: translated.remote! } : translated;
        // The server's names were screened; one an override chose is the operator's mistake.
        const unsafe = names.has(final.name) ? "is the name of another tool of the group" : unsafeToolName(final.name);
        if (unsafe)
          throw new ToolsetSpecError(
            `mcpServers.${group}: the override renamed ${JSON.stringify(tool.name)} to ${JSON.stringify(final.name)}, which ${unsafe}`,
          );
        names.add(final.name);
        pinned.tools.push(final);
      }
    }),
  );
  return pinned;
}

function pinTool(group: string, server: string, spec: McpServerSpec, tool: Tool, policies: Readonly<Record<string, PolicySpec>>): PinnedTool {
  const name = `${spec.prefix ?? ""}${tool.name}`;
  const annotations = tool.annotations as JsonObject | undefined;
  const defaults: Partial<ToolPolicy> = {
    // Annotations are hints from the server: they set defaults, never permissions.
    ...(tool.annotations?.destructiveHint === true ? { approval: true } : {}),
    ...(spec.callTimeoutMs ? { timeoutMs: spec.callTimeoutMs } : {}),
  };
  return {
    group,
    name,
    source: "mcp",
    description: tool.description ?? tool.title ?? "",
    inputSchema: tool.inputSchema as JsonObject,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as JsonObject } : {}),
    policy: resolvePolicy(group, name, policies, defaults),
    ...(annotations ? { annotations } : {}),
    risk: tool.annotations?.readOnlyHint === true ? "low" : tool.annotations?.destructiveHint === true ? "high" : "medium",
    remote: { server, name: tool.name },
  };
}
