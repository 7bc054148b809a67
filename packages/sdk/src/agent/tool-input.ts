/**
 * Checks a model's input against its tool's schema before a handler uses it. A model's mistake
 * (a missing field, a wrong type, a field no tool has) is a message written for it, which the
 * handler returns with `isError`, so the model can fix the call.
 *
 * Only the keywords the agent tools' schemas use are checked: `type`, `enum`, `minimum`,
 * `minLength`, `maxLength`, `pattern`, `required`, `additionalProperties: false` (one level:
 * nested JSON such as a scenario is checked by whoever reads it).
 */
import type { JsonObject, JsonValue } from "@tapedeck/protocol";
import { agentToolDefinitions, type AgentToolInputs, type AgentToolName, type ToolInputSchema } from "./tool-definitions.js";

/** A tool's input, checked: the typed input, or what is wrong with it (for the model). */
export type ParsedToolInput<N extends AgentToolName> =
  /** The input matches the schema. */
  | { readonly ok: true; readonly input: AgentToolInputs[N] }
  /** It does not: `message` says what to fix. */
  | { readonly ok: false; readonly message: string };

const SCHEMAS = new Map(agentToolDefinitions().map((definition) => [definition.name, definition.inputSchema] as const));

/** Checks `input` against the schema of tool `name`. Never throws. */
export function parseToolInput<N extends AgentToolName>(name: N, input: unknown): ParsedToolInput<N> {
  const schema = SCHEMAS.get(name) as ToolInputSchema;
  const problems = objectProblems(schema, input);
  if (problems.length === 0) return { ok: true, input: input as AgentToolInputs[N] };
  const fields = Object.keys(schema.properties).map((key) => (schema.required.includes(key) ? key : `${key}?`));
  return { ok: false, message: `The input of ${name} is not valid: ${problems.join("; ")}. ${name} takes { ${fields.join(", ")} }.` };
}

function objectProblems(schema: ToolInputSchema, input: unknown): string[] {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return [`it must be a JSON object, not ${kindOf(input)}`];
  const record = input as Record<string, unknown>;
  const problems = schema.required.filter((key) => record[key] === undefined).map((key) => `"${key}" is missing`);
  for (const [key, value] of Object.entries(record)) {
    const property = schema.properties[key];
    if (property === undefined) problems.push(`"${key}" is not one of its fields`);
    else if (value !== undefined) problems.push(...valueProblems(property, value, `"${key}"`));
  }
  return problems;
}

function valueProblems(schema: JsonObject, value: unknown, where: string): string[] {
  const type = schema["type"];
  if (typeof type === "string" && !hasType(value, type)) return [`${where} must be ${article(type)}, not ${kindOf(value)}`];
  const problems: string[] = [];
  const allowed = schema["enum"];
  if (Array.isArray(allowed) && !allowed.includes(value as JsonValue))
    problems.push(`${where} must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`);
  if (typeof value === "number" && typeof schema["minimum"] === "number" && value < schema["minimum"])
    problems.push(`${where} must be at least ${schema["minimum"]}`);
  if (typeof value === "string") {
    const { minLength, maxLength, pattern } = schema;
    if (typeof minLength === "number" && value.length < minLength)
      problems.push(minLength === 1 ? `${where} must not be empty` : `${where} must have at least ${minLength} characters`);
    if (typeof maxLength === "number" && value.length > maxLength) problems.push(`${where} must have at most ${maxLength} characters`);
    if (typeof pattern === "string" && !new RegExp(pattern, "u").test(value)) problems.push(`${where} must match ${pattern}`);
  }
  return problems;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isInteger(value)) return "a fractional number";
  return article(typeof value);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
