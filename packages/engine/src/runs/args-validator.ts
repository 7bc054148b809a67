import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { Ajv as AjvDraft07 } from "ajv";
import { toolFailure, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";

/**
 * Validates a call's arguments against its tool's pinned input schema before anything is
 * recorded or sent. Schemas come from the outside world, so the validator is lenient about
 * unknown keywords and formats; a schema that cannot be compiled validates nothing rather than
 * blocking every call (registration reports it).
 */
export class ArgsValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  /** Many servers still write draft-07 schemas (`"$schema": ".../draft-07/schema#"`). */
  private readonly draft07 = new AjvDraft07({ strict: false, allErrors: true, validateFormats: false });
  /** Each tool's compiled validator, or why its schema cannot be compiled. */
  private readonly compiled = new WeakMap<PinnedTool, ValidateFunction | string>();

  /** `undefined` when the arguments are valid, else the `invalid_arguments` failure. */
  validate(tool: PinnedTool, args: JsonValue): ToolFailure | undefined {
    const validate = this.compile(tool);
    if (typeof validate === "string" || validate(args)) return undefined;
    const problems = (validate.errors ?? []).slice(0, 5).map(describe);
    return toolFailure(
      "invalid_arguments",
      `Invalid arguments for ${tool.group}.${tool.name}: ${problems.join("; ")}. Fix the arguments to match the tool's declaration.`,
      { details: (validate.errors ?? []).slice(0, 5).map((e) => ({ path: e.instancePath || "/", schemaPath: e.schemaPath, message: e.message ?? "" })) },
    );
  }

  /** Compiles the schema (kept for `validate`); the error message when it cannot be. */
  schemaProblem(tool: PinnedTool): string | undefined {
    const compiled = this.compile(tool);
    return typeof compiled === "string" ? compiled : undefined;
  }

  private ajvFor(tool: PinnedTool): Ajv2020 | AjvDraft07 {
    const declared = typeof tool.inputSchema === "object" ? tool.inputSchema.$schema : undefined;
    return typeof declared === "string" && OLD_DRAFT.test(declared) ? this.draft07 : this.ajv;
  }

  private compile(tool: PinnedTool): ValidateFunction | string {
    let compiled = this.compiled.get(tool);
    if (compiled === undefined) {
      try {
        compiled = this.ajvFor(tool).compile(tool.inputSchema);
      } catch (error) {
        compiled = (error as Error).message;
      }
      this.compiled.set(tool, compiled);
    }
    return compiled;
  }
}

const OLD_DRAFT = /json-schema\.org\/draft-0[4-7]\/schema/;

function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "the arguments" : error.instancePath;
  const allowed = error.keyword === "enum" ? ` (${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})` : "";
  const extra = error.keyword === "additionalProperties" ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : "";
  return `${where} ${error.message ?? "is invalid"}${allowed}${extra} [schema ${error.schemaPath}]`;
}
