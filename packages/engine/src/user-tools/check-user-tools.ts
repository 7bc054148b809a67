import type { Diagnostic, PinnedToolset } from "@tapedeck/protocol";
import type { ScriptCheck } from "../script/checker-pool.js";
import { scriptSizeDiagnostic } from "../script/script-size.js";
import { userToolSpecOf } from "./user-tool-spec.js";
import { prepareUserTool } from "./user-tool-registration.js";

/**
 * Checks the user tools of a toolset being registered: each one's definition, grants (the tools
 * it may invoke must be tools of this toolset) and limits, then its TypeScript against exactly
 * what it is granted and its own input and output schemas, off the event loop (the engine's
 * checker). Every problem of every tool is named at once, code problems by line and column with
 * a code frame, for whoever wrote the tool (often a model).
 */

/** What is wrong with the toolset's user tools, one text per problem (empty when nothing is). */
export async function userToolProblems(toolset: PinnedToolset, checker: ScriptCheck): Promise<string[]> {
  const problems: string[] = [];
  for (const tool of toolset.tools) {
    if (tool.source !== "user") continue;
    const where = `userTools.${tool.group}["${tool.name}"]`;
    const prepared = prepareUserTool(userToolSpecOf(tool), toolset.tools);
    if (!prepared.ok) {
      problems.push(...prepared.problems.map((problem) => `${where}.${problem.replace(/^definition\./, "")}`));
      continue;
    }
    const tooLarge = scriptSizeDiagnostic(prepared.code);
    const checked =
      tooLarge !== undefined ? { ok: false as const, diagnostics: [tooLarge] } : await checker.check(prepared.code, prepared.declarations, prepared.options);
    if (!checked.ok) problems.push(...checked.diagnostics.filter((d) => d.category === "error").map((d) => `${where}.code ${describe(d)}`));
  }
  return problems;
}

/** A diagnostic as one problem: where, what, and the lines around it. */
export function describe(diagnostic: Diagnostic): string {
  const frame = diagnostic.frame === "" ? "" : `\n${diagnostic.frame}`;
  const code = typeof diagnostic.code === "number" ? `TS${diagnostic.code}` : diagnostic.code;
  return `line ${diagnostic.line}, column ${diagnostic.column}: ${diagnostic.message} (${code})${frame}`;
}
