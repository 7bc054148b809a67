import type { PinnedTool, PinnedToolset, ToolsetSpec } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import { sha256Hex } from "../util/ids.js";
import { resolvePolicy } from "./policy.js";
import { checkPolicyTargets } from "./toolset-file.js";

/**
 * Pins a toolset: the exact tools (schemas, descriptions, resolved policies) a run will use
 * for its whole life. The id is `ts_` + SHA-256 of the RFC 8785 canonical JSON of the pinned
 * tools, so the same toolset always gets the same id and any change gets a new one.
 */
export function pinToolset(spec: ToolsetSpec): PinnedToolset {
  const policies = spec.policies ?? {};
  const tools: PinnedTool[] = [];
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
  checkPolicyTargets(policies, tools);
  return toolsetOf(tools);
}

/** A toolset of exactly these tools, sorted, with its content address. */
export function toolsetOf(tools: readonly PinnedTool[]): PinnedToolset {
  const sorted = [...tools].sort((a, b) => compare(a.group, b.group) || compare(a.name, b.name));
  const id = `ts_${sha256Hex(canonicalJson(JSON.parse(JSON.stringify(sorted)) as never))}`;
  return { id, tools: sorted };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
