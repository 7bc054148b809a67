import type { PinnedTool } from "@tapedeck/protocol";
import type { SandboxFeature } from "../sandbox/sandbox.js";
import { isHttpFetch } from "../sources/http/http-tool.js";

/**
 * The globals a toolset adds to scripts, from its pinned tools: `fetch` when it pins the
 * built-in `http.fetch`. The checker declares them and the sandbox installs them from the same
 * list, so what type-checks is what runs.
 */
export function scriptFeatures(tools: readonly PinnedTool[]): SandboxFeature[] {
  return tools.some(isHttpFetch) ? ["fetch"] : [];
}

/** The tools a script imports from `tapedeck:tools`: built-ins are reached through globals instead. */
export function importableTools(tools: readonly PinnedTool[]): PinnedTool[] {
  return tools.filter((tool) => tool.source !== "builtin");
}
