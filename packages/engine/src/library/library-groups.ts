import { echoTool } from "./basic/echo.js";
import { jsonTools } from "./basic/json-tools.js";
import { timeTool } from "./basic/time.js";
import { applyPatchTool } from "./files/apply-patch.js";
import { listDirTool } from "./files/list-dir.js";
import { readFileTool } from "./files/read-file.js";
import { workspaceSupport, type WorkspaceMode } from "./files/workspace.js";
import { writeFileTool } from "./files/write-file.js";
import type { LibraryTool } from "./library-tool.js";
import { memoryTools } from "./memory/memory-tools.js";
import type { ShellProbe } from "./shell/shell-probe.js";
import { shellTools } from "./shell/shell-tool.js";
import { webFetchTool } from "./web/web-fetch.js";
import { LIBRARY_GROUP_NAMES, type LibraryGroupName } from "../toolset/library-group-names.js";

/**
 * The groups of the built-in library, as a toolset enables them
 * (`"library": { "time": {}, "files": { "mode": "rw" }, … }`): each group's options, and the
 * tools it offers with them — or why it cannot be offered on this machine (registration says
 * so instead of offering a tool that would fail every call).
 *
 * Invariant: one factory per group, checked by the compiler (a mapped type over the group
 * names): a new group cannot be listed without saying how its tools are made.
 */

export { LIBRARY_GROUP_NAMES, type LibraryGroupName } from "../toolset/library-group-names.js";

/** What a toolset may say about each group. */
export interface LibraryGroupOptions {
  readonly echo: Readonly<Record<string, never>>;
  readonly time: Readonly<Record<string, never>>;
  readonly json: Readonly<Record<string, never>>;
  readonly web: Readonly<Record<string, never>>;
  /** `ro`: only `read` and `list`; the workspace is opened read-only (the shell then sees it read-only too). Default `rw`. */
  readonly files: { readonly mode?: WorkspaceMode };
  readonly shell: Readonly<Record<string, never>>;
  readonly memory: Readonly<Record<string, never>>;
}

/** What the engine knows about this machine and its configuration. */
export interface LibraryHost {
  /** `probeShell()`'s answer, once per engine. */
  readonly shell: ShellProbe;
  /** An embeddings endpoint is configured for memory search. */
  readonly embeddings: boolean;
}

export type GroupTools = { readonly ok: true; readonly tools: readonly LibraryTool[] } | { readonly ok: false; readonly reason: string };

const offered = (tools: readonly LibraryTool[]): GroupTools => ({ ok: true, tools });

const GROUPS: { readonly [K in LibraryGroupName]: (options: LibraryGroupOptions[K], host: LibraryHost) => GroupTools } = {
  echo: () => offered([echoTool]),
  time: () => offered([timeTool]),
  json: () => offered(jsonTools),
  web: () => offered([webFetchTool]),
  files: ({ mode = "rw" }) => {
    const support = workspaceSupport();
    if (!support.ok) return support;
    return offered(mode === "ro" ? [readFileTool, listDirTool] : [readFileTool, writeFileTool, listDirTool, applyPatchTool]);
  },
  shell: (_options, host) => (host.shell.ok ? offered(shellTools(host.shell.sandbox)) : { ok: false, reason: host.shell.reason }),
  memory: (_options, host) => offered(memoryTools({ embeddings: host.embeddings })),
};

/** The tools of group `name` with `options`, or why the group cannot be offered here. */
export function libraryGroupTools<K extends LibraryGroupName>(name: K, options: LibraryGroupOptions[K], host: LibraryHost): GroupTools {
  return GROUPS[name](options, host);
}

/**
 * The library's group names as an entry of the registry's protected names
 * (`toolset/protected-names.ts`): no MCP server, host tool or user tool may take them.
 */
export const LIBRARY_PROTECTED_NAMES: { readonly why: string; readonly names: readonly string[] } = {
  why: "it is a group of the built-in tool library (echo, time, json, web, files, shell, memory), which a toolset enables under that name",
  names: LIBRARY_GROUP_NAMES,
};
