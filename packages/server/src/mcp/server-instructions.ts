/**
 * The most of the toolset's declarations the server's `instructions` carry, characters. A host
 * puts the instructions in the model's context on every turn; a large toolset's declarations are
 * cut here, and the model finds the rest with `search_tools`.
 */
export const INSTRUCTIONS_DECLARATIONS_LIMIT = 8000;

/**
 * The MCP server's `instructions` in code mode: what the tools are for, and the toolset's prompt
 * declarations (one line per tool), cut at a whole line past `limit` with the count left out.
 */
export function codeModeInstructions(declarations: string, searchable: boolean, limit = INSTRUCTIONS_DECLARATIONS_LIMIT): string {
  const intro =
    "Tapedeck runs TypeScript scripts durably against a toolset: write one script that does the whole task and run it with run_script " +
    "(check_script type-checks, test_script runs against mocks). Every call a script makes is journaled; runs survive restarts, can wait for signals, " +
    "and retry_run fixes a failed run without making its calls again.";
  const lines = declarations.split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0) return intro;
  const kept: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (size + line.length + 1 > limit) break;
    kept.push(line);
    size += line.length + 1;
  }
  const left = lines.length - kept.length;
  const more = left === 0 ? [] : [`(${left} more tool${left === 1 ? "" : "s"} not shown${searchable ? ": find them with search_tools" : ""}.)`];
  return [intro, "", 'What scripts can import from "tapedeck:tools":', ...kept, ...more].join("\n");
}
