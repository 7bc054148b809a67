import type { JsonObject, JsonValue } from "@tapedeck/protocol";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { paths, query } from "jsonpath-rfc9535";
import { defineTool, failure, result, type LibraryTool } from "../library-tool.js";
import { jsonErrorPosition } from "./json-error-position.js";

/**
 * `json.parse`, `json.stringify`, `json.query` (RFC 9535 JSONPath) and `json.validate`
 * (JSON Schema 2020-12): the JSON work a model without code cannot do reliably in its head, and
 * that a script gets here without shipping a JSONPath engine or a validator into its sandbox.
 *
 * Invariants:
 * - Every result is bounded: at most `MAX_MATCHES` query matches and `MAX_SCHEMA_ERRORS`
 *   validation errors, each bound saying how many more there were.
 * - Bad input (text that is not JSON, a path that is not JSONPath, a schema that does not
 *   compile) is a failure that says where it is wrong, never a throw.
 * - A schema given to `validate` is compiled for that call and forgotten: nothing a call passes
 *   in stays in the engine (a `$id` given twice is not "already defined").
 */

/** Matches a query returns; more are counted, not returned. */
export const MAX_MATCHES = 1_000;
/** Validation errors returned; more are counted. */
export const MAX_SCHEMA_ERRORS = 50;

const ANY: JsonObject = { description: "Any JSON value." };

const parseTool = defineTool<{ text: string }>({
  name: "parse",
  description: "Parses JSON text into a value. When the text is not JSON, the failure says the line and column where it goes wrong.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  outputSchema: { type: "object", properties: { value: ANY }, required: ["value"], additionalProperties: false },
  risk: "low",
  approval: { kind: "never" },
  needs: [],
  execute: ({ text }) => Promise.resolve(parse(text)),
});

const stringifyTool = defineTool<{ value: JsonValue; indent?: number }>({
  name: "stringify",
  description: "Writes a value as JSON text, indented by `indent` spaces (0 for one line; default 2).",
  inputSchema: {
    type: "object",
    properties: { value: ANY, indent: { type: "integer", minimum: 0, maximum: 8 } },
    required: ["value"],
    additionalProperties: false,
  },
  outputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  risk: "low",
  approval: { kind: "never" },
  needs: [],
  execute: ({ value, indent = 2 }) => Promise.resolve(result({ text: JSON.stringify(value, null, indent) })),
});

const queryTool = defineTool<{ data: JsonValue; path: string }>({
  name: "query",
  description:
    "Selects values from JSON data with a JSONPath expression (RFC 9535), e.g. `$.users[0].name`, `$..price`, `$.items[?@.price < 10].id`, " +
    "`$.users[?match(@.name, 'A.*')]`. Returns each match with its normalized path.",
  inputSchema: {
    type: "object",
    properties: { data: ANY, path: { type: "string", minLength: 1, description: "A JSONPath expression starting with $." } },
    required: ["data", "path"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      matches: {
        type: "array",
        items: { type: "object", properties: { path: { type: "string" }, value: ANY }, required: ["path", "value"], additionalProperties: false },
      },
      count: { type: "integer", description: "How many values matched (more than `matches` holds when it was cut)." },
      note: { type: "string" },
    },
    required: ["matches", "count"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  needs: [],
  execute: ({ data, path }) => Promise.resolve(jsonPath(data, path)),
});

const validateTool = defineTool<{ data: JsonValue; schema: JsonObject | boolean }>({
  name: "validate",
  description:
    "Checks JSON data against a JSON Schema (draft 2020-12; formats are not checked). Returns valid, and the errors: where in the data " +
    "(a JSON pointer), what is wrong, and which schema keyword failed.",
  inputSchema: {
    type: "object",
    properties: { data: ANY, schema: { type: ["object", "boolean"], description: "A JSON Schema." } },
    required: ["data", "schema"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      valid: { type: "boolean" },
      errors: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, message: { type: "string" }, keyword: { type: "string" }, schemaPath: { type: "string" } },
          required: ["path", "message", "keyword", "schemaPath"],
          additionalProperties: false,
        },
      },
      errorCount: { type: "integer" },
    },
    required: ["valid", "errors", "errorCount"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  needs: [],
  execute: ({ data, schema }) => Promise.resolve(validate(data, schema)),
});

export const jsonTools: readonly LibraryTool<never>[] = [parseTool, stringifyTool, queryTool, validateTool];

function parse(text: string) {
  try {
    return result({ value: JSON.parse(text) as JsonValue });
  } catch (error) {
    const { offset, line, column, reason } = jsonErrorPosition(text, error as Error);
    const near = JSON.stringify(text.slice(Math.max(0, offset - 20), offset + 20));
    return failure("invalid_json", `The text is not JSON: ${reason}, at line ${line}, column ${column} (near ${near}). Fix the text there and parse again.`, {
      line,
      column,
      offset,
    });
  }
}

function jsonPath(data: JsonValue, path: string) {
  let values: JsonValue[];
  let where: string[];
  try {
    values = query(data, path);
    where = paths(data, path);
  } catch (error) {
    return failure(
      "invalid_arguments",
      `"${path}" is not a JSONPath expression (RFC 9535): ${(error as Error).message}. Expressions start with $, e.g. $.items[0] or $..name.`,
    );
  }
  const matches = values.slice(0, MAX_MATCHES).map((value, index) => ({ path: where[index] ?? "", value }));
  const cut = values.length - matches.length;
  const note = cut > 0 ? `${cut} more matches were left out (at most ${MAX_MATCHES} are returned); narrow the path to see them.` : undefined;
  return result({ matches, count: values.length, ...(note === undefined ? {} : { note }) });
}

function validate(data: JsonValue, schema: JsonObject | boolean) {
  // One validator per call: a schema a call passes in is compiled, used and forgotten.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  let check;
  try {
    check = ajv.compile(schema);
  } catch (error) {
    return failure(
      "invalid_schema",
      `The schema does not compile: ${(error as Error).message}. Fix the schema (JSON Schema draft 2020-12) and validate again.`,
    );
  }
  if (check(data)) return result({ valid: true, errors: [], errorCount: 0 });
  const all = check.errors ?? [];
  return result({ valid: false, errors: all.slice(0, MAX_SCHEMA_ERRORS).map(describeError), errorCount: all.length });
}

function describeError(error: ErrorObject) {
  return { path: error.instancePath, message: error.message ?? "is invalid", keyword: error.keyword, schemaPath: error.schemaPath };
}
