import type { McpServerRecipe, PinnedTool, PinnedToolset, PinnedWorkflow, RunBudget, ToolsetSpec } from "@tapedeck/protocol";
import type { McpToolSource } from "../sources/mcp/mcp-tool-source.js";
import type { LibraryPlace } from "./library-spec-file.js";
import { pinHttpTool } from "./pin-http.js";
import { pinMcpServers, type McpAddresses, type McpOverride } from "./pin-mcp.js";
import { canonicalJson } from "../util/canonical-json.js";
import { valueProblem } from "../util/value-bounds.js";
import { sha256Hex } from "../util/ids.js";
import { resolveHostPolicy, resolveRisk } from "./policy.js";
import { ToolsetSpecError } from "./spec-error.js";
import { checkPolicyTargets } from "./toolset-file.js";
import { pinUserTools } from "./pin-user-tools.js";

/**
 * Pins a toolset: the exact tools (schemas, descriptions, resolved policies) a run will use
 * for its whole life. The id is `ts_` + SHA-256 of the RFC 8785 canonical JSON of the pinned
 * tools, so the same toolset always gets the same id and any change gets a new one.
 */
export async function pinToolset(
  spec: ToolsetSpec,
  mcp: McpToolSource,
  overrides: Readonly<Record<string, McpOverride>> = {},
  /** Reads a registered toolset, for `base`. */
  loadBase: (id: string) => Promise<PinnedToolset | undefined> = () => Promise.resolve(undefined),
  /** Where its MCP servers may be reached (see `McpAddresses`). */
  addresses: McpAddresses = "any",
  /** This engine's built-in tool library, for `library`. */
  library?: LibraryPlace,
): Promise<{ toolset: PinnedToolset; warnings: string[] }> {
  const base = spec.base === undefined ? undefined : await loadBase(spec.base);
  if (spec.base !== undefined && !base) throw new ToolsetSpecError(`base: there is no toolset ${spec.base}; register the base toolset first`);
  const policies = spec.policies ?? {};
  const remote = spec.mcpServers ? await pinMcpServers(spec.mcpServers, policies, mcp, overrides, addresses) : { tools: [], servers: {}, warnings: [] };
  const tools: PinnedTool[] = [...remote.tools];
  for (const [group, byName] of Object.entries(spec.hostTools ?? {})) {
    for (const [name, tool] of Object.entries(byName)) {
      const risk = resolveRisk(group, name, policies);
      tools.push({
        group,
        name,
        source: "host",
        description: tool.description ?? "",
        inputSchema: tool.inputSchema ?? { type: "object" },
        ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
        policy: resolveHostPolicy(group, name, policies),
        ...(risk === undefined ? {} : { risk }),
      });
    }
  }
  // The built-in `http.fetch` is pinned like any tool, its allow-list with it: the toolset id covers it.
  if (spec.http) tools.push(pinHttpTool(spec.http.allow, policies));
  if (spec.library) {
    if (!library) throw new ToolsetSpecError("library: this engine has no built-in tool library to pin the groups from");
    tools.push(...(await library.pin(spec.library, spec.http, policies)));
  }
  // User tools carry their code, grants and limits: the toolset id covers them.
  tools.push(...pinUserTools(spec.userTools, policies));
  // A derived toolset's policies are for the tools it adds: the base's stay as they were pinned.
  for (const key of Object.keys(policies)) {
    const group = key.split(".")[0];
    if (base?.tools.some((t) => t.group === group)) {
      throw new ToolsetSpecError(
        `policies["${key}"] targets a tool of the base toolset, whose policies stay as they were pinned; derive from a base registered with the policy you want`,
      );
    }
  }
  checkPolicyTargets(policies, tools);
  // A derived toolset keeps its base's budget unless it gives its own.
  const budget = spec.budget ?? base?.budget;
  checkBudgetTools(budget, [...(base?.tools ?? []), ...tools]);
  if (!base) return { toolset: toolsetOf(tools, remote.servers, undefined, {}, budget), warnings: remote.warnings };
  const baseGroups = new Set(base.tools.map((t) => t.group));
  const clash = [...new Set(tools.map((t) => t.group))].find((group) => baseGroups.has(group));
  if (clash !== undefined)
    throw new ToolsetSpecError(`the group "${clash}" is already in the base toolset ${base.id}; a derived toolset adds groups, it does not replace them`);
  // The base's workflows carry over: they run on the tools the derived toolset keeps.
  return {
    toolset: toolsetOf([...base.tools, ...tools], { ...base.servers, ...remote.servers }, base.id, base.workflows, budget),
    warnings: remote.warnings,
  };
}

/** Every tool a budget limits must be one of the toolset's: a typo would silently limit nothing. */
function checkBudgetTools(budget: RunBudget | undefined, tools: readonly PinnedTool[]): void {
  const names = new Set(tools.map((t) => `${t.group}.${t.name}`));
  for (const tool of Object.keys(budget?.maxCallsPerTool ?? {})) {
    if (!names.has(tool))
      throw new ToolsetSpecError(
        `budget.maxCallsPerTool["${tool}"] names no tool of this toolset; write "<group>.<name>" (tools: ${[...names].sort().join(", ") || "none"})`,
      );
  }
}

/** A toolset of exactly these tools (and the servers they call, and the workflows it pins), sorted, with its content address. */
export function toolsetOf(
  tools: readonly PinnedTool[],
  servers: Readonly<Record<string, McpServerRecipe>> = {},
  base?: string,
  workflows: Readonly<Record<string, PinnedWorkflow>> = {},
  budget?: RunBudget,
): PinnedToolset {
  const sorted = [...tools].sort((a, b) => compare(a.group, b.group) || compare(a.name, b.name));
  const hasServers = Object.keys(servers).length > 0;
  const hasWorkflows = Object.keys(workflows).length > 0;
  const pinned = {
    ...(base === undefined ? {} : { base }),
    tools: sorted,
    ...(hasServers ? { servers } : {}),
    ...(hasWorkflows ? { workflows } : {}),
    ...(budget === undefined ? {} : { budget }),
  };
  // A plain toolset hashes as before (its sorted tools, or tools and servers): ids stay stable.
  const hashed = base === undefined && !hasServers && !hasWorkflows && budget === undefined ? sorted : pinned;
  // Canonical JSON (the id) cannot hold a lone surrogate, whether the spec or an MCP server's tool list brought it.
  const problem = valueProblem(hashed, { refuseLoneSurrogates: true });
  if (problem !== undefined) throw new ToolsetSpecError(`the toolset cannot be registered: ${problem.replace(/^it /, "it (its tools, sorted) ")}`);
  const id = `ts_${sha256Hex(canonicalJson(JSON.parse(JSON.stringify(hashed)) as never))}`;
  return { id, ...pinned };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
