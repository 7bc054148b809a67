import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { Ajv as AjvDraft07 } from "ajv";
import { toolFailure, type JsonSchema, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";

/**
 * The engine's one JSON Schema validator: a call's arguments against its tool's pinned input
 * schema (before anything is recorded or sent), and the values that cross a workflow's boundary
 * (the input of `start`, a signal's payload, the child's output) against the schemas it was
 * saved with.
 *
 * Invariants:
 * - Schemas come from the outside world: unknown keywords and formats are ignored, and a schema
 *   that cannot be compiled validates nothing rather than blocking every value (registration and
 *   saving a workflow refuse such schemas first, with `schemaProblem`).
 * - Each schema object is compiled once, for the validator's life (a pinned toolset's schemas
 *   never change); two schemas with the same `$id` belong in two validators (one per toolset).
 * - A problem names where in the value it is (a JSON pointer), never the value itself.
 */
export class SchemaValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  /** Many servers still write draft-07 schemas (`"$schema": ".../draft-07/schema#"`). */
  private readonly draft07 = new AjvDraft07({ strict: false, allErrors: true, validateFormats: false });
  /** Each schema's compiled validator, or why it cannot be compiled. */
  private readonly compiled = new WeakMap<object, ValidateFunction | string>();

  /** Why `schema` cannot be compiled, if it cannot (the compiled schema is kept for later values). */
  schemaProblem(schema: JsonSchema): string | undefined {
    const compiled = this.compile(schema);
    return typeof compiled === "string" ? compiled : undefined;
  }

  /** What is wrong with `value` (at most five problems, each with its path), or undefined when it matches. */
  problems(schema: JsonSchema, value: JsonValue): string[] | undefined {
    const errors = this.errors(schema, value);
    return errors && errors.map((error) => describe(error, "the value"));
  }

  /** `undefined` when the arguments fit the tool's input schema, else the `invalid_arguments` failure the script gets. */
  validateArgs(tool: PinnedTool, args: JsonValue): ToolFailure | undefined {
    const errors = this.errors(tool.inputSchema, args);
    if (errors === undefined) return undefined;
    const problems = errors.map((error) => `${describe(error, "the arguments")} [schema ${error.schemaPath}]`);
    return toolFailure(
      "invalid_arguments",
      `Invalid arguments for ${tool.group}.${tool.name}: ${problems.join("; ")}. Fix the arguments to match the tool's declaration.`,
      { details: errors.map((e) => ({ path: e.instancePath || "/", schemaPath: e.schemaPath, message: e.message ?? "" })) },
    );
  }

  /** The first five errors of `value`, or undefined when it matches (or the schema cannot be compiled). */
  private errors(schema: JsonSchema, value: JsonValue): ErrorObject[] | undefined {
    const validate = this.compile(schema);
    if (typeof validate === "string" || validate(value)) return undefined;
    return (validate.errors ?? []).slice(0, 5);
  }

  private compile(schema: JsonSchema): ValidateFunction | string {
    // `true` and `false` are schemas too; a WeakMap keys objects only.
    const key = typeof schema === "boolean" ? (schema ? ANYTHING : NOTHING) : schema;
    let compiled = this.compiled.get(key);
    if (compiled === undefined) {
      const declared = typeof schema === "boolean" ? undefined : schema.$schema;
      const ajv = typeof declared === "string" && OLD_DRAFT.test(declared) ? this.draft07 : this.ajv;
      try {
        compiled = ajv.compile(schema);
      } catch (error) {
        compiled = (error as Error).message;
      }
      this.compiled.set(key, compiled);
    }
    return compiled;
  }
}

const OLD_DRAFT = /json-schema\.org\/draft-0[4-7]\/schema/;
const ANYTHING = {};
const NOTHING = {};

function describe(error: ErrorObject, whole: string): string {
  const where = error.instancePath === "" ? whole : error.instancePath;
  const allowed = error.keyword === "enum" ? ` (${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})` : "";
  const extra = error.keyword === "additionalProperties" ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : "";
  return `${where} ${error.message ?? "is invalid"}${allowed}${extra}`;
}
