import { toolPath, type PinnedToolset } from "@tapedeck/protocol";
import { EngineError } from "../errors.js";
import { bindDirectTools, type BoundTable } from "./direct-binding.js";
import { checkDirectOptions, type DirectOptions } from "./direct-options.js";
import type { SessionTable } from "./session-journal.js";
import { globMatchesTool, globProblem } from "./tool-glob.js";

/**
 * A session's tool table from what the harness asked (`directTools({...})` over HTTP): the options
 * checked whole (every mistake named by its path, nothing bound on any), the tools chosen by
 * `tools` globs, bound (`bindDirectTools`). The same `SessionTable` always binds the same table,
 * so a binding recorded in a session's journal is rebuilt exactly after a restart.
 */

export interface TableRequest {
  readonly toolset: string;
  readonly tools?: readonly string[];
  readonly approval?: unknown;
  readonly lazy?: unknown;
  readonly results?: unknown;
  readonly errorEnvelope?: unknown;
}

/** The recorded form of a request, or every mistake in it (`invalid_request`). */
export function sessionTableOf(request: TableRequest): SessionTable {
  const options: Record<string, unknown> = {};
  for (const key of ["approval", "lazy", "results", "errorEnvelope"] as const) if (request[key] !== undefined) options[key] = request[key];
  const checked = checkDirectOptions(options);
  const problems = checked.ok ? [] : checked.errors.map((e) => `${e.path} ${e.message}`);
  (request.tools ?? []).forEach((glob, index) => {
    const problem = globProblem(glob);
    if (problem !== undefined) problems.push(`directTools.tools[${index}] ${problem}`);
  });
  if (problems.length > 0 || !checked.ok) {
    throw new EngineError("invalid_request", `The direct tools' options are refused, nothing was bound:\n- ${problems.join("\n- ")}`);
  }
  const normalized: DirectOptions = {
    approval: checked.options.approval,
    ...(checked.options.lazy === null ? {} : { lazy: checked.options.lazy }),
    results: checked.options.results,
    ...(checked.options.errorEnvelope === null ? {} : { errorEnvelope: checked.options.errorEnvelope }),
  };
  return { toolset: request.toolset, options: normalized, ...(request.tools === undefined ? {} : { tools: [...request.tools] }) };
}

/** The table `table` binds over `toolset` (its pinned toolset). */
export function boundTableOf(table: SessionTable, toolset: PinnedToolset): BoundTable {
  const checked = checkDirectOptions(table.options);
  if (!checked.ok) throw new Error(`a recorded direct binding no longer checks: ${JSON.stringify(checked.errors)}`);
  const globs = table.tools;
  const tools =
    globs === undefined
      ? toolset.tools
      : toolset.tools.filter((tool) =>
          globs.some((glob) => globMatchesTool(glob, { path: toolPath(tool), name: tool.name, modelName: `${tool.group}_${tool.name}` })),
        );
  if (tools.length === 0) {
    throw new EngineError(
      "invalid_request",
      globs === undefined
        ? `Toolset ${toolset.id} has no tools to bind.`
        : `No tool of toolset ${toolset.id} matches directTools.tools (${globs.join(", ")}): bind at least one tool.`,
    );
  }
  return bindDirectTools(toolset, checked.options, tools);
}
