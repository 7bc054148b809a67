import type { PinnedTool, PolicySpec, ToolsetSpec } from "@tapedeck/protocol";
import { resolvePolicy } from "./policy.js";
import { normaliseGrants, type UserToolGrants } from "./user-tool-grants.js";
import { withDefaultLimits } from "./user-tool-limits.js";

/**
 * Pins the user tools of a toolset file: each is a `PinnedTool` of source `user` whose `user`
 * holds its code, its normalised grants and every limit (defaults filled in), so that the
 * toolset's content address covers all of them — changing a grant, a limit or a line of code
 * gives a new toolset id, and runs keep the toolset they started on.
 */

/** The pinned tools of `userTools` (already parsed), with the toolset's policies applied. */
export function pinUserTools(userTools: ToolsetSpec["userTools"], policies: Readonly<Record<string, PolicySpec>>): PinnedTool[] {
  const tools: PinnedTool[] = [];
  for (const [group, byName] of Object.entries(userTools ?? {})) {
    for (const [name, tool] of Object.entries(byName)) {
      tools.push({
        group,
        name,
        source: "user",
        description: tool.description ?? "",
        inputSchema: tool.inputSchema ?? { type: "object" },
        ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
        policy: resolvePolicy(group, name, policies),
        user: {
          ...(tool.wasm === undefined ? { code: tool.code ?? "" } : { wasm: { module: tool.wasm, entry: tool.entry ?? "run" } }),
          grants: normaliseGrants((tool.grants ?? {}) as UserToolGrants),
          limits: withDefaultLimits(tool.wasm === undefined ? "code" : "wasm", tool.limits),
        },
      });
    }
  }
  return tools;
}
