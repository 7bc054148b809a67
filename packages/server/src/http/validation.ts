import { Ajv, type ErrorObject, type Options } from "ajv";
import { NAMESPACE_FORMAT, namespaceError, namespaceProblem } from "@tapedeck/protocol/api";
import type { FastifySchemaCompiler, FastifySchemaValidationError, FastifyServerOptions } from "fastify";

/** The part of a request a validation error is in (`body`, `querystring`, `params`, `headers`). */
type SchemaErrorDataVar = Parameters<NonNullable<FastifyServerOptions["schemaErrorFormatter"]>>[1];

/**
 * How requests are validated: one JSON Schema per route part, compiled by ajv, the same
 * schemas `@fastify/swagger` publishes at `GET /openapi.json`.
 *
 * Bodies are JSON and taken exactly as sent: no type coercion, no default filling, no removal
 * of unknown fields — a wrong type or an unknown field is a 400 that names it, never silently
 * "fixed". Query strings and path parameters are text on the wire, so they are coerced: an
 * integer parameter (`limit`, `from`, `wait`, `seq`) must be written as an integer (`?limit=abc`
 * and `?limit=1.5` are 400s), and an array parameter (`status`) may be given once or repeated.
 */
// verbose: errors carry their schema, so an unknown field's message can list the allowed ones.
const COMMON: Options = { verbose: true, allErrors: false, removeAdditional: false, useDefaults: false, strict: true, allowUnionTypes: true };

const bodyAjv = new Ajv({ ...COMMON, coerceTypes: false });
const textAjv = new Ajv({ ...COMMON, coerceTypes: "array" });
// Every namespace field of the API (a run's, a token's, a credential's, a list filter) is one end user's id, spelled one way.
for (const ajv of [bodyAjv, textAjv]) ajv.addFormat(NAMESPACE_FORMAT, { type: "string", validate: (name: string) => namespaceProblem(name) === undefined });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => (httpPart === "body" ? bodyAjv : textAjv).compile(schema);

/** One validation error as a sentence that names the field: `body.labels.env must be a string`. */
export function formatValidationErrors(errors: FastifySchemaValidationError[], part: SchemaErrorDataVar): Error {
  const [first] = errors;
  return new Error(first === undefined ? `The ${part} is malformed.` : describe(first as ErrorObject, part));
}

function describe(error: ErrorObject, part: SchemaErrorDataVar): string {
  const where = fieldPath(part, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "additionalProperties":
      return `${where} has an unknown field "${String(params.additionalProperty)}"${allowedFields(error)}.`;
    case "required":
      return `${fieldPath(part, `${error.instancePath}/${String(params.missingProperty)}`)} is required.`;
    case "type":
      return `${where} must be ${article(String(params.type))}.`;
    case "format":
      if (params.format === NAMESPACE_FORMAT && typeof error.data === "string") return namespaceError(error.data, where) ?? `${where} is not a namespace.`;
      return `${where} ${error.message ?? "is invalid"}.`;
    case "enum":
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}.`;
    default:
      return `${where} ${error.message ?? "is invalid"}.`;
  }
}

/** `body` + `/labels/env` → `body.labels.env`; keys that are not identifiers are quoted. */
function fieldPath(part: SchemaErrorDataVar, pointer: string): string {
  const segments =
    pointer === ""
      ? []
      : pointer
          .slice(1)
          .split("/")
          .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  return segments.reduce((path, segment) => {
    if (/^[A-Za-z_$][\w$]*$/.test(segment)) return `${path}.${segment}`;
    return /^\d+$/.test(segment) ? `${path}[${segment}]` : `${path}[${JSON.stringify(segment)}]`;
  }, part);
}

function allowedFields(error: ErrorObject): string {
  const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties ? `; allowed fields: ${Object.keys(properties).join(", ")}` : "";
}

function article(type: string): string {
  const names: Record<string, string> = {
    object: "an object",
    array: "an array",
    integer: "an integer",
    string: "a string",
    number: "a number",
    boolean: "a boolean",
    null: "null",
  };
  return type
    .split(",")
    .map((t) => names[t] ?? t)
    .join(" or ");
}
