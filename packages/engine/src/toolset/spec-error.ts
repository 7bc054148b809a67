import { TOOL_NAME } from "./mcp-tool-list.js";
import { protectedName } from "./protected-names.js";

/** A toolset file or spec that cannot be registered; the message says where and what to do. */
export class ToolsetSpecError extends Error {
  readonly code = "invalid_toolset";
  constructor(message: string) {
    super(message);
    this.name = "ToolsetSpecError";
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Words a group cannot be named: they are not valid bindings. (Names that would shadow something are in `protected-names.ts`.) */
const RESERVED_GROUPS = new Set([
  "await",
  "yield",
  "let",
  "static",
  "enum",
  "implements",
  "package",
  "protected",
  "interface",
  "private",
  "public",
  "break",
  "case",
  "catch",
  "class",
  "const",
  "continue",
  "debugger",
  "delete",
  "do",
  "else",
  "export",
  "extends",
  "finally",
  "for",
  "function",
  "if",
  "import",
  "in",
  "instanceof",
  "new",
  "return",
  "super",
  "switch",
  "this",
  "throw",
  "try",
  "typeof",
  "var",
  "void",
  "while",
  "with",
  "null",
  "true",
  "false",
]);

/** Checks that a group name can be imported from `tapedeck:tools` and hides nothing a script reaches by that name. */
export function checkGroupName(group: string, where: string): void {
  if (!IDENTIFIER.test(group) || RESERVED_GROUPS.has(group)) {
    throw new ToolsetSpecError(
      `${where}: group ${JSON.stringify(group)} cannot be imported by a script; use a JavaScript identifier that is not a reserved word (letters, digits, _ or $)`,
    );
  }
  const clash = protectedName(group);
  if (clash !== undefined) {
    throw new ToolsetSpecError(`${where}: the group name "${group}" is taken: ${clash}. Give the group another name.`);
  }
}

/**
 * Checks the name of a tool a toolset file declares itself (a host tool, a user tool) in group
 * `where` (`hostTools.crm`): the names a declaration and a prompt line carry safely, and never
 * one that would make its group a thenable or reach its prototype. `hint` ends the first message.
 */
export function checkToolName(name: string, where: string, hint = ""): void {
  if (!TOOL_NAME.test(name)) throw new ToolsetSpecError(`${where}: ${JSON.stringify(name)} is not a tool name: use 1 to 128 letters, digits, _, - or .${hint}`);
  if (name === "then" || name === "__proto__")
    throw new ToolsetSpecError(
      `${where}: a tool may not be named ${JSON.stringify(name)} (a group with it would be a thenable, or reach its own prototype): rename it`,
    );
}
