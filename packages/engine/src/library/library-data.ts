import { toolPath, type PinnedTool } from "@tapedeck/protocol";
import type { LibraryGroupName } from "./library-groups.js";

/**
 * Which tools of a toolset reach the data the library keeps per namespace (`library-folder.ts`):
 * a workspace (the `files` and `shell` groups, a user tool granted `workspace`) or a memory (the
 * `memory` group). Runs and sessions without a namespace share one such space (`default`), so
 * whoever may place a run there decides who reads what another wrote (see
 * `packages/server/src/tenancy/library-access.ts`).
 */

/** Library groups whose tools keep files in the library folder. */
export const LIBRARY_DATA_GROUPS: ReadonlySet<string> = new Set<LibraryGroupName>(["files", "shell", "memory"]);

/** The `group.name` of each tool in `tools` that reads or writes a namespace's workspace or memory, in order. */
export function libraryDataTools(tools: readonly PinnedTool[]): string[] {
  return tools.filter((tool) => (tool.source === "library" && LIBRARY_DATA_GROUPS.has(tool.group)) || tool.user?.grants.workspace !== undefined).map(toolPath);
}
