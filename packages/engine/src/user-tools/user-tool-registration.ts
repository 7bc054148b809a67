import type { Diagnostic, JsonObject, PinnedTool } from "@tapedeck/protocol";
import { listDirTool } from "../library/files/list-dir.js";
import { readFileTool } from "../library/files/read-file.js";
import { writeFileTool } from "../library/files/write-file.js";
import type { LibraryTool } from "../library/library-tool.js";
import { isHttpFetch } from "../sources/http/http-tool.js";
import { definitionProblems, type ToolDefinition } from "../library/tool-definition.js";
import type { CheckOptions, ScriptChecker, ScriptDeclarations } from "../script/checker.js";
import { compileScript, type CompiledScript } from "../script/compile.js";
import { featureGlobals } from "../script/feature-globals.js";
import type { SandboxFeature } from "../sandbox/sandbox.js";
import { renderDeclarations } from "../toolset/declarations.js";
import { DEFAULT_POLICY } from "../toolset/policy.js";
import { schemaToType } from "../toolset/schema-to-type.js";
import { canonicalJson } from "../util/canonical-json.js";
import { sha256Hex } from "../util/ids.js";
import { grantsProblems, normaliseGrants, type UserToolGrants } from "../toolset/user-tool-grants.js";
import { DEFAULT_USER_TOOL_LIMITS, limitsProblems, type UserToolLimits } from "../toolset/user-tool-limits.js";

/**
 * Registering a user tool: its definition, grants and limits are checked, and its TypeScript is
 * type-checked against declarations of exactly what it is granted — `fetch` only with an HTTP
 * grant, `workspace.read/list` (and `write` when `rw`), the granted tools of the toolset with
 * their schemas — and its default export against its own input and output schemas. What it
 * is not granted does not exist in its types (nor, at run time, in its sandbox).
 *
 * Invariants:
 * - A registration that fails says every problem at once: fields by name, code by line and
 *   column with a code frame (the checker's diagnostics), for the model that wrote it.
 * - A `UserTool` is immutable and content-addressed: `hash` covers the definition, the code,
 *   the normalised grants and the limits, so changing a grant gives a new tool (and a new
 *   toolset); the toolset's pin keeps running runs on theirs.
 */

export interface UserToolSpec {
  readonly definition: ToolDefinition;
  /** TypeScript: an ES module whose default export takes the arguments and returns the result (or a promise of it). */
  readonly code: string;
  readonly grants?: UserToolGrants;
  readonly limits?: Partial<UserToolLimits>;
}

/** A registered user tool: everything a call needs, compiled once. */
export interface UserTool {
  readonly definition: ToolDefinition;
  readonly grants: UserToolGrants;
  readonly limits: UserToolLimits;
  /** The code as JavaScript, and its source map back to the TypeScript. */
  readonly js: string;
  readonly sourceMap: string;
  /** What its sandbox's `tapedeck:tools` exports: group → tool names. */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly features: readonly SandboxFeature[];
  /** SHA-256 of the canonical definition, code, grants and limits. */
  readonly hash: string;
}

export type Registration =
  | { readonly ok: true; readonly tool: UserTool; readonly warnings: readonly Diagnostic[] }
  | { readonly ok: false; readonly problems: readonly string[]; readonly diagnostics: readonly Diagnostic[] };

/** The group the workspace tools are imported as: `import { workspace } from "tapedeck:tools"`. */
export const WORKSPACE_GROUP = "workspace";

/** Workspace tools by name, as the tool calls them (`workspace.read`), and the library tool that serves each. */
export const WORKSPACE_TOOLS: ReadonlyMap<string, LibraryTool<"workspace">> = new Map([
  ["read", readFileTool],
  ["write", writeFileTool],
  ["list", listDirTool],
]);

/** A spec whose fields are sound, ready to be type-checked (by any checker) and then finished into a `UserTool`. */
export type PreparedUserTool =
  | { readonly ok: false; readonly problems: readonly string[] }
  | {
      readonly ok: true;
      /** What to type-check: the code, against these declarations, with these options. */
      readonly code: string;
      readonly declarations: ScriptDeclarations;
      readonly options: CheckOptions;
      /** The tool, once its code type-checked and was compiled. */
      readonly finish: (compiled: CompiledScript) => UserTool;
    };

/**
 * Checks `spec`'s definition, grants and limits, and says what its code must be checked
 * against. `toolset`: the pinned tools of the toolset the tool is registered in; the tools it is
 * granted must be among them.
 */
export function prepareUserTool(spec: UserToolSpec, toolset: readonly PinnedTool[]): PreparedUserTool {
  const grants = spec.grants ?? {};
  const problems = [
    ...definitionProblems(spec.definition).map((p) => `definition.${p}`),
    ...grantsProblems(grants).map((p) => `grants.${p}`),
    ...limitsProblems(spec.limits ?? {}),
  ];
  const byName = new Map(toolset.map((tool) => [`${tool.group}.${tool.name}`, tool]));
  const invoked: PinnedTool[] = [];
  for (const name of grants.tools ?? []) {
    const tool = byName.get(name);
    if (tool === undefined) problems.push(`grants.tools: "${name}" is not a tool of this toolset`);
    else if (tool.group === WORKSPACE_GROUP) problems.push(`grants.tools: "${name}": the workspace is granted with grants.workspace`);
    else if (isHttpFetch(tool)) problems.push(`grants.tools: "${name}" is a built-in; grant the network with grants.http (host, path prefix, methods)`);
    else invoked.push(tool);
  }
  if (problems.length > 0) return { ok: false, problems };

  const normalised = normaliseGrants(grants);
  const declared = [...invoked, ...workspaceTools(normalised).map((name) => pinLibraryTool(WORKSPACE_GROUP, WORKSPACE_TOOLS.get(name)!))];
  // Declared as importable tools whatever their source (MCP, host, library, other user tools):
  // `renderDeclarations` leaves built-ins out of the module (scripts reach them through
  // globals), but a user tool imports every one.
  const declarations = renderDeclarations(declared.map((tool) => ({ ...tool, source: "host" }))).typescript;
  const definition = spec.definition;
  const limits: UserToolLimits = { ...DEFAULT_USER_TOOL_LIMITS, ...spec.limits };
  return {
    ok: true,
    code: spec.code,
    declarations: { id: `user-tool:${sha256Hex(declarations)}`, text: declarations },
    options: {
      extraGlobals: featureGlobals(featuresOf(normalised)),
      workflow: {
        input: schemaToType(definition.inputSchema, { style: "ts" }),
        output: definition.outputSchema === undefined ? "unknown" : schemaToType(definition.outputSchema, { style: "ts" }),
      },
    },
    finish: (compiled) => userToolOf(definition, spec.code, normalised, limits, compiled),
  };
}

/** Registers `spec` with a checker in this thread (tests, `save_tool`'s dry runs); the engine checks off its event loop (`check-user-tools.ts`). */
export function registerUserTool(spec: UserToolSpec, toolset: readonly PinnedTool[], checker: ScriptChecker): Registration {
  const prepared = prepareUserTool(spec, toolset);
  if (!prepared.ok) return { ok: false, problems: prepared.problems, diagnostics: [] };
  const checked = checker.check(prepared.code, prepared.declarations, prepared.options);
  if (!checked.ok) return { ok: false, problems: ["code: it does not type-check (see the diagnostics)"], diagnostics: checked.diagnostics };
  return { ok: true, tool: prepared.finish(compileScript(spec.code)), warnings: checked.diagnostics };
}

/**
 * A registered tool from its parts (grants already normalised, limits complete), its code
 * already checked and compiled: what a toolset pins is made into a `UserTool` this way at run time.
 */
export function userToolOf(definition: ToolDefinition, code: string, grants: UserToolGrants, limits: UserToolLimits, compiled: CompiledScript): UserTool {
  // Keyed by group names from the toolset: a null-prototype object.
  const groups: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const name of grants.tools ?? []) {
    const dot = name.indexOf(".");
    (groups[name.slice(0, dot)] ??= []).push(name.slice(dot + 1));
  }
  const workspace = workspaceTools(grants);
  if (workspace.length > 0) groups[WORKSPACE_GROUP] = workspace;
  const hash = sha256Hex(canonicalJson({ definition: definition as unknown as JsonObject, code, grants: grants as JsonObject, limits: { ...limits } }));
  return { definition, grants, limits, js: compiled.js, sourceMap: compiled.sourceMap, groups, features: featuresOf(grants), hash };
}

function workspaceTools(grants: UserToolGrants): string[] {
  return grants.workspace === undefined ? [] : grants.workspace === "rw" ? ["list", "read", "write"] : ["list", "read"];
}

function featuresOf(grants: UserToolGrants): SandboxFeature[] {
  return grants.http === undefined ? [] : ["fetch"];
}

function pinLibraryTool(group: string, tool: LibraryTool): PinnedTool {
  return {
    group,
    name: tool.name,
    source: "builtin",
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    policy: DEFAULT_POLICY,
  };
}
