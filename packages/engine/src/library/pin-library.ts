import type { HttpSpec, JsonObject, LibrarySpec, PinnedTool, PolicySpec } from "@tapedeck/protocol";
import { resolvePolicy, resolveRisk } from "../toolset/policy.js";
import { ToolsetSpecError } from "../toolset/spec-error.js";
import { libraryGroupTools, type LibraryGroupName, type LibraryHost } from "./library-groups.js";
import type { LibraryTool } from "./library-tool.js";

/** What pinning asks of the engine's library: where it keeps files, and what this machine can do. */
export interface LibraryPinning {
  /** Why a group keeping files cannot be enabled here; undefined when there is a folder. */
  readonly noFolder: (group: string) => string | undefined;
  /** The library's view of this machine (bubblewrap, embeddings), probed once. */
  host(): Promise<LibraryHost>;
}

/**
 * Pins the built-in library's groups a toolset enables: each tool as its group offers it with the
 * toolset's options (`files` in `ro` offers only `read` and `list`), source `library`, with its
 * options, its risk and its default policy (the toolset's `policies` over it). Being pinned, they
 * are part of the toolset's id: enabling a group or changing an option gives another toolset.
 *
 * A group this engine cannot serve (no library folder for files, shell or memory; no bubblewrap
 * for shell) refuses the registration with the reason: a toolset's tools never depend on the
 * machine that registered it, and a script never meets a tool that fails every call.
 */
export async function pinLibraryTools(
  library: LibrarySpec,
  http: HttpSpec | undefined,
  policies: Readonly<Record<string, PolicySpec>>,
  place: LibraryPinning,
): Promise<PinnedTool[]> {
  const pinned: PinnedTool[] = [];
  for (const group of Object.keys(library).sort()) {
    const options = library[group]!;
    const noFolder = place.noFolder(group);
    if (noFolder !== undefined) throw new ToolsetSpecError(`library.${group} cannot be enabled on this engine: ${noFolder}`);
    const offered = libraryGroupTools(group as LibraryGroupName, options as never, await place.host());
    if (!offered.ok) throw new ToolsetSpecError(`library.${group} cannot be enabled on this engine: ${offered.reason} (or leave ${group} out of library)`);
    const workspace = group === "files" ? modeOf(options) : group === "shell" ? modeOf(library.files ?? {}) : undefined;
    for (const tool of offered.tools) pinned.push(pinLibraryTool(group, tool, options, workspace, group === "web" ? http : undefined, policies));
  }
  return pinned;
}

/** The workspace mode a files group's options give (the shell sees the workspace the way files does). */
function modeOf(options: JsonObject): "rw" | "ro" {
  return options.mode === "ro" ? "ro" : "rw";
}

function pinLibraryTool(
  group: string,
  tool: LibraryTool,
  options: JsonObject,
  workspace: "rw" | "ro" | undefined,
  http: HttpSpec | undefined,
  policies: Readonly<Record<string, PolicySpec>>,
): PinnedTool {
  // The definition's approval decides per call (its rules, its reasons), its rate limit applies; the toolset's policies override both.
  const defaults = {
    approval: false,
    ...(tool.approval.kind === "never" ? {} : { approvalRules: tool.approval }),
    ...(tool.rateLimit === undefined ? {} : { rateLimit: tool.rateLimit }),
    ...(tool.timeoutMs === undefined ? {} : { timeoutMs: tool.timeoutMs }),
    ...(tool.sensitiveParams === undefined || tool.sensitiveParams.length === 0 ? {} : { sensitiveParams: [...new Set(tool.sensitiveParams)].sort() }),
  };
  return {
    group,
    name: tool.name,
    source: "library",
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    policy: resolvePolicy(group, tool.name, policies, defaults),
    risk: resolveRisk(group, tool.name, policies) ?? tool.risk,
    ...(http === undefined ? {} : { http: { allow: [...new Set(http.allow)].sort() } }),
    library: { options, ...(workspace === undefined ? {} : { workspace }) },
  };
}
