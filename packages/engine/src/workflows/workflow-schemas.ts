import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { Ajv as AjvDraft07 } from "ajv";
import type { JsonSchema, JsonValue } from "@tapedeck/protocol";

/**
 * Validates the values that cross a workflow's boundary against the JSON Schemas it was saved
 * with: the input of `start`, the payload of a signal, and the child's output. Lenient about
 * unknown keywords and formats like the arguments validator; a schema that cannot be compiled is
 * refused when the workflow is saved, so it never reaches `problems`.
 */
export class WorkflowSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly draft07 = new AjvDraft07({ strict: false, allErrors: true, validateFormats: false });
  /** Compiled per schema object (the pinned toolset's, kept for the engine's life). */
  private readonly compiled = new WeakMap<object, ValidateFunction | string>();

  /** Why `schema` cannot be compiled, if it cannot. */
  schemaProblem(schema: JsonSchema): string | undefined {
    const compiled = this.compile(schema);
    return typeof compiled === "string" ? compiled : undefined;
  }

  /** What is wrong with `value` (at most five problems, each with its path), or undefined when it matches. */
  problems(schema: JsonSchema, value: JsonValue): string[] | undefined {
    const validate = this.compile(schema);
    if (typeof validate === "string" || validate(value)) return undefined;
    return (validate.errors ?? []).slice(0, 5).map(describe);
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

function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "the value" : error.instancePath;
  const allowed = error.keyword === "enum" ? ` (${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})` : "";
  const extra = error.keyword === "additionalProperties" ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : "";
  return `${where} ${error.message ?? "is invalid"}${allowed}${extra}`;
}
