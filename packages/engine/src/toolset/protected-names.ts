/**
 * Names no tool group may take, because a script would reach something else by them: a group is
 * a binding the script imports (`import { tapedeck } from "tapedeck:tools"`, and the prompt's
 * import line lists every group), so a group named like a global hides that global from the
 * script, and the group `tapedeck` is the engine's own: its calls (`tapedeck.sleep`, …) are
 * executed as primitives, not sent to any tool.
 *
 * Invariants:
 * - One list, here: registration (`checkGroupName`) refuses every name in it, with the reason,
 *   whatever the group's source (host tools, MCP server). A test checks that every global the
 *   sandbox defines is in it, so a new global cannot be forgotten.
 * - It only grows. A toolset registered before a name was added keeps working (its group is
 *   pinned); only new registrations are refused.
 * - Add a kind of name as one more entry of `PROTECTED`, with why it is taken, for the error.
 *   The built-in library's groups are here (a toolset enables them by name); so are the agent
 *   tools' names (`AGENT_TOOL_NAMES` of @tapedeck/protocol, which the SDK builds the tools from).
 */

import { AGENT_TOOL_NAMES } from "@tapedeck/protocol";
import { LIBRARY_GROUP_NAMES } from "./library-group-names.js";

interface ProtectedNames {
  /** Why the names are taken, completing "the group name "x" is taken: …". */
  readonly why: string;
  readonly names: readonly string[];
}

/** Globals QuickJS defines (the ECMAScript standard library as the sandbox has it), and the ones TypeScript's lib declares. */
const JS_GLOBALS = [
  "AggregateError",
  "Array",
  "ArrayBuffer",
  "Atomics",
  "BigInt",
  "BigInt64Array",
  "BigUint64Array",
  "Boolean",
  "DataView",
  "Date",
  "Error",
  "EvalError",
  "FinalizationRegistry",
  "Float16Array",
  "Float32Array",
  "Float64Array",
  "Function",
  "Infinity",
  "Int16Array",
  "Int32Array",
  "Int8Array",
  "InternalError",
  "Intl",
  "Iterator",
  "JSON",
  "Map",
  "Math",
  "NaN",
  "Number",
  "Object",
  "Promise",
  "Proxy",
  "RangeError",
  "ReferenceError",
  "Reflect",
  "RegExp",
  "Set",
  "SharedArrayBuffer",
  "String",
  "Symbol",
  "SyntaxError",
  "TypeError",
  "URIError",
  "Uint16Array",
  "Uint32Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "WeakMap",
  "WeakRef",
  "WeakSet",
  "decodeURI",
  "decodeURIComponent",
  "encodeURI",
  "encodeURIComponent",
  "escape",
  "eval",
  "globalThis",
  "isFinite",
  "isNaN",
  "parseFloat",
  "parseInt",
  "undefined",
  "unescape",
  "arguments",
];

const HIDES = "a group of that name would hide it from every script that imports the group";

const PROTECTED: readonly ProtectedNames[] = [
  {
    why: "it is the engine's own: calls named tapedeck.* (sleep, signal, webhook, workflow.start…) are waits the engine executes itself, never sent to a tool",
    names: ["tapedeck"],
  },
  { why: "it is the group of the built-in http tool (fetch in scripts)", names: ["http"] },
  { why: `it is the global that starts and signals the toolset's workflows; ${HIDES}`, names: ["workflows"] },
  { why: `it is a global every script has; ${HIDES}`, names: ["sleep", "signal", "webhook", "setTimeout", "clearTimeout", "console", "fetch"] },
  { why: "it is an export of tapedeck:tools already", names: ["ToolError", "default"] },
  { why: "it is the sandbox's own binding", names: ["__tapedeck_tools__"] },
  {
    why: `it is a group of the built-in tool library (${LIBRARY_GROUP_NAMES.join(", ")}), which a toolset enables under that name ("library": { "<group>": {} })`,
    names: LIBRARY_GROUP_NAMES,
  },
  { why: "it is the name of an agent tool a model is given next to the toolset's tools", names: AGENT_TOOL_NAMES },
  { why: `it is a JavaScript global; ${HIDES}`, names: JS_GLOBALS },
  // `__proto__` is an identifier, but as a key of the plain JSON objects a toolset travels in
  // (a toolset file, an API body) it sets a prototype instead of naming a group.
  { why: "it holds an object's prototype in JavaScript, so as a key of a toolset's JSON it would not name a group", names: ["__proto__"] },
];

const BY_NAME: ReadonlyMap<string, string> = new Map(PROTECTED.flatMap(({ why, names }) => names.map((name) => [name, why] as const)));

/** Why a group may not take `name` ("it is a global every script has; …"), or undefined if it may. */
export function protectedName(name: string): string | undefined {
  return BY_NAME.get(name);
}

/** Every protected name (for tests and documentation). */
export function protectedNames(): readonly string[] {
  return [...BY_NAME.keys()];
}
