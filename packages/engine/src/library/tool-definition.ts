import type { JsonObject, ToolRateLimit } from "@tapedeck/protocol";
import { approvalProblems, type Approval } from "../toolset/approval.js";
import { rateLimitProblems } from "../toolset/rate-limit-spec.js";
import { sensitiveParamsProblems } from "../toolset/sensitive-params.js";

/**
 * The one tool contract (issue 15): what a tool declares, as plain data. The same shape serves
 * the built-in library's tools, host tools, tools users or models write, and — without
 * `execute`, which lives on the server — the policy Tapedeck applies to an MCP server's tool.
 * Being data, a definition can be written in a toolset file, pinned and hashed with a toolset,
 * and sent over the wire; behaviour is added beside it (`LibraryTool.execute`), never inside it.
 *
 * Invariants:
 * - `definitionProblems` names every malformed field, so registration can refuse a definition
 *   with one message listing them, and nothing downstream meets a malformed one.
 * - Every limit has a default the engine applies when a field is absent (`DEFAULT_TIMEOUT_MS`;
 *   no rate limit; approval `never`); a definition only says what differs.
 */

/** How much harm a call can do: a default for approval policies ([direct-tools]' `byRisk`), never a permission. */
export type Risk =
  /** Reads only (time, a web page, a file). */
  | "low"
  /** Changes something that can be changed back (writes a file in the workspace, a memory document). */
  | "medium"
  /** Runs code, or changes what cannot be taken back. */
  | "high";

/** A rate limit (the wire type `ToolRateLimit`). */
export type RateLimit = ToolRateLimit;

export interface ToolDefinition {
  /** The tool's name inside its group (an identifier: `read`, `search`). */
  readonly name: string;
  /** What it does, when to use it, what it cannot do — written for a model. */
  readonly description: string;
  /** JSON Schema (2020-12) of the arguments: an object schema. */
  readonly inputSchema: JsonObject;
  /** JSON Schema of the result, when the tool promises one (it becomes the result's type in scripts). */
  readonly outputSchema?: JsonObject;
  readonly risk: Risk;
  /** The default approval; a toolset's policy may tighten or loosen it. */
  readonly approval: Approval;
  /** The default rate limit; absent: none. */
  readonly rateLimit?: RateLimit;
  /** Longest an attempt may take, ms. Absent: the engine's default for its kind of tool. */
  readonly timeoutMs?: number;
  /** JSON pointers into the arguments whose values are secret: redacted wherever calls are shown or stored (`redactSensitive`). */
  readonly sensitiveParams?: readonly string[];
}

/** A tool name: what scripts write after the group (`files.read`) and model APIs accept. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export { MAX_RATE_LIMIT } from "../toolset/rate-limit-spec.js";

/** What is wrong with `definition` (empty when nothing is), each naming the field. */
export function definitionProblems(definition: ToolDefinition): readonly string[] {
  const problems: string[] = [];
  if (!NAME.test(definition.name)) problems.push(`name: "${definition.name}" is not an identifier of at most 64 characters (letters, digits, _)`);
  if (definition.description.trim() === "") problems.push("description: say what the tool does, for the model that will call it");
  if (definition.inputSchema.type !== "object") problems.push('inputSchema: the arguments are an object; give a schema with "type": "object"');
  if (!["low", "medium", "high"].includes(definition.risk)) problems.push(`risk: "${definition.risk}" is not one of low, medium, high`);
  problems.push(...approvalProblems(definition.approval).map((problem) => `approval.${problem}`));
  problems.push(...rateLimitProblems(definition.rateLimit));
  const timeout = definition.timeoutMs;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0))
    problems.push(`timeoutMs: ${timeout} is not a positive whole number of milliseconds`);
  problems.push(...sensitiveParamsProblems(definition.sensitiveParams ?? []));
  return problems;
}
