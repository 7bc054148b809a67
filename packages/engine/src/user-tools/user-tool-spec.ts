import type { JsonObject, PinnedTool } from "@tapedeck/protocol";
import type { ToolDefinition } from "../library/tool-definition.js";
import type { UserToolGrants } from "../toolset/user-tool-grants.js";
import type { UserToolLimits } from "../toolset/user-tool-limits.js";
import type { UserToolSpec } from "./user-tool-registration.js";

/** A pinned user tool as the runner's spec: `name` is the plain name (registration) or `group.name` (messages at run time). */
export function userToolSpecOf(tool: PinnedTool, name = tool.name): UserToolSpec & { readonly grants: UserToolGrants; readonly limits: UserToolLimits } {
  if (tool.user === undefined) throw new Error(`${tool.group}.${tool.name} is not a user tool`);
  const definition: ToolDefinition = {
    name,
    description: tool.description,
    inputSchema: typeof tool.inputSchema === "object" ? tool.inputSchema : ({ type: "object" } satisfies JsonObject),
    ...(typeof tool.outputSchema === "object" ? { outputSchema: tool.outputSchema } : {}),
    risk: tool.risk ?? "medium",
    // Approval is the toolset's policy, applied by the call intake before the call reaches the tool.
    approval: { kind: "never" },
  };
  return { definition, code: tool.user.code ?? "", grants: tool.user.grants as UserToolGrants, limits: tool.user.limits };
}
