import { HostBugError } from "./host-bug-error.js";
import { TOOLS_GLOBAL } from "./prelude.js";

/**
 * The one module a script can import. Its source only re-exports what the prelude built
 * (one frozen object per group, and `ToolError`), so a group may have any name: exports
 * use string names (`export { g0 as "my-group" }`).
 */
export const TOOLS_MODULE = "tapedeck:tools";

/** Source of `tapedeck:tools` for these groups. Throws `HostBugError` for a group named `ToolError`. */
export function toolsModuleSource(groups: readonly string[]): string {
  if (groups.includes("ToolError")) {
    throw new HostBugError('A tool group cannot be named "ToolError": tapedeck:tools already exports the ToolError class.');
  }
  const lines = [`const tools = globalThis[${JSON.stringify(TOOLS_GLOBAL)}];`, "const ToolError = tools.ToolError;"];
  const names = ["ToolError"];
  groups.forEach((group, i) => {
    lines.push(`const g${i} = tools.groups[${JSON.stringify(group)}];`);
    names.push(`g${i} as ${JSON.stringify(group)}`);
  });
  lines.push(`export { ${names.join(", ")} };`);
  return lines.join("\n");
}

/** Why any other import fails: written for the model that wrote the script. */
export function forbiddenImportMessage(name: string): string {
  return (
    `Cannot import ${JSON.stringify(name)}: scripts can import only "${TOOLS_MODULE}". ` +
    "There is no file system, network or Node.js module in the sandbox; reach everything through the tools."
  );
}
