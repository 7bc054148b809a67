import type { Diagnostic, PinnedTool, PinnedToolset } from "@tapedeck/protocol";
import type { ScriptCheck } from "../script/checker-pool.js";
import type { CompiledScript } from "../script/compile.js";
import { scriptSizeDiagnostic } from "../script/script-size.js";
import { ceilingProblems, DEFAULT_USER_TOOL_CEILINGS } from "../toolset/user-tool-limits.js";
import { prepareUserTool, type UserTool } from "./user-tool-registration.js";
import { userToolSpecOf } from "./user-tool-spec.js";
import { wasmModuleProblems } from "./wasm-tool-runner.js";

/**
 * Checks user tools being registered (a toolset's `userTools`, or `save_tool`): each one's
 * definition, grants (the tools it may invoke must be tools of its toolset) and limits, then its
 * TypeScript against exactly what it is granted and its own input and output schemas, off the
 * event loop (the engine's checker). Every problem is named at once, code problems by line and
 * column with a code frame, for whoever wrote the tool (often a model).
 */

export type UserToolCheck =
  | { readonly ok: false; readonly problems: readonly string[]; readonly diagnostics: readonly Diagnostic[] }
  | { readonly ok: true; readonly warnings: readonly Diagnostic[]; readonly finish: (compiled: CompiledScript) => UserTool };

/**
 * Where a user tool's code lives, so that an error names the fix there: a toolset file's
 * `userTools` entry (its `grants`), or a `save_tool` call (its `capabilities`).
 */
export type UserToolHome = "toolset" | "save_tool";

/** The checker's advice for `fetch` is a script's (the toolset's `http` tool); a tool's network is its own grant. */
const NO_FETCH = "Cannot find name 'fetch':";

function fetchAdvice(home: UserToolHome): string {
  const grant = '[{ "host": "<host>", "pathPrefix": "/<path>/", "methods": ["GET"] }]';
  return home === "save_tool"
    ? `${NO_FETCH} this tool has no network unless the save_tool call grants it: add "capabilities": { "http": ${grant} } to the save_tool call (the toolset's "http" entry does not reach a user tool).`
    : `${NO_FETCH} this tool has no network unless its entry grants it: add "grants": { "http": ${grant} } to the tool's entry under "userTools" in the toolset file (the toolset's "http" entry does not reach a user tool).`;
}

/** `diagnostics` with the advice for a missing `fetch` written for a tool that lives at `home`. */
function forTool(diagnostics: readonly Diagnostic[], home: UserToolHome): Diagnostic[] {
  return diagnostics.map((d) => (d.message.startsWith(NO_FETCH) ? { ...d, message: fetchAdvice(home) } : d));
}

/** Checks the user tool `tool` of a toolset of `tools`, which lives at `home` (default a toolset file). */
export async function checkUserTool(
  tool: PinnedTool,
  tools: readonly PinnedTool[],
  checker: ScriptCheck,
  home: UserToolHome = "toolset",
): Promise<UserToolCheck> {
  const wasm = tool.user?.wasm;
  if (wasm !== undefined) {
    const spec = userToolSpecOf(tool);
    // The definition, grants (the tools it may invoke among the toolset's) and limits are checked as a TypeScript tool's.
    const prepared = prepareUserTool(spec, tools);
    const problems = prepared.ok ? [] : prepared.problems.map((problem) => problem.replace(/^definition\./, ""));
    problems.push(...(await wasmModuleProblems(Buffer.from(wasm.module, "base64"), wasm.entry, spec.grants, spec.limits)));
    if (problems.length > 0) return { ok: false, problems, diagnostics: [] };
    return {
      ok: true,
      warnings: [],
      finish: () => {
        throw new Error("a wasm tool is not compiled");
      },
    };
  }
  const prepared = prepareUserTool(userToolSpecOf(tool), tools);
  if (!prepared.ok) return { ok: false, problems: prepared.problems.map((problem) => problem.replace(/^definition\./, "")), diagnostics: [] };
  const tooLarge = scriptSizeDiagnostic(prepared.code);
  const checked =
    tooLarge !== undefined ? { ok: false as const, diagnostics: [tooLarge] } : await checker.check(prepared.code, prepared.declarations, prepared.options);
  if (!checked.ok) return { ok: false, problems: ["code: it does not type-check (see the diagnostics)"], diagnostics: forTool(checked.diagnostics, home) };
  return { ok: true, warnings: forTool(checked.diagnostics, home), finish: prepared.finish };
}

/**
 * What is wrong with the toolset's user tools, one text per problem (empty when nothing is):
 * each tool's checks, and its limits against the server's `ceilings` (default `DEFAULT_USER_TOOL_CEILINGS`).
 */
export async function userToolProblems(toolset: PinnedToolset, checker: ScriptCheck, ceilings = DEFAULT_USER_TOOL_CEILINGS): Promise<string[]> {
  const problems: string[] = [];
  for (const tool of toolset.tools) {
    if (tool.source !== "user") continue;
    const where = `userTools.${tool.group}["${tool.name}"]`;
    const over = ceilingProblems(userToolSpecOf(tool).limits, ceilings);
    if (over.length > 0) {
      // Past a ceiling the tool is not checked further: its limits are the problem to fix first.
      problems.push(...over.map((problem) => `${where}.${problem}`));
      continue;
    }
    const checked = await checkUserTool(tool, toolset.tools, checker);
    if (checked.ok) continue;
    if (checked.diagnostics.length === 0) problems.push(...checked.problems.map((problem) => `${where}.${problem}`));
    problems.push(...checked.diagnostics.filter((d) => d.category === "error").map((d) => `${where}.code ${describeDiagnostic(d)}`));
  }
  return problems;
}

/** A diagnostic as one problem: where, what, and the lines around it. */
export function describeDiagnostic(diagnostic: Diagnostic): string {
  const frame = diagnostic.frame === "" ? "" : `\n${diagnostic.frame}`;
  const code = typeof diagnostic.code === "number" ? `TS${diagnostic.code}` : diagnostic.code;
  return `line ${diagnostic.line}, column ${diagnostic.column}: ${diagnostic.message} (${code})${frame}`;
}
