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
  private readonly compiled = new WeakMap<PinnedTool, ValidateFunction | null>();

  /** `undefined` when the arguments are valid, else the `invalid_arguments` failure. */
  validate(tool: PinnedTool, args: JsonValue): ToolFailure | undefined {
    const validate = this.compile(tool);
    if (!validate || validate(args)) return undefined;
    const problems = (validate.errors ?? []).slice(0, 5).map(describe);
    return toolFailure(
      "invalid_arguments",
      `Invalid arguments for ${tool.group}.${tool.name}: ${problems.join("; ")}. Fix the arguments to match the tool's declaration.`,
      { details: (validate.errors ?? []).slice(0, 5).map((e) => ({ path: e.instancePath || "/", schemaPath: e.schemaPath, message: e.message ?? "" })) },
    );
  }

  /** Compiles the schema; the error message when it cannot be. */
  schemaProblem(tool: PinnedTool): string | undefined {
    try {
      this.ajvFor(tool).compile(tool.inputSchema);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  private ajvFor(tool: PinnedTool): Ajv2020 | AjvDraft07 {
    const declared = typeof tool.inputSchema === "object" ? tool.inputSchema.$schema : undefined;
    return typeof declared === "string" && OLD_DRAFT.test(declared) ? this.draft07 : this.ajv;
  }

  private compile(tool: PinnedTool): ValidateFunction | null {
    let validate = this.compiled.get(tool);
    if (validate === undefined) {
      try {
        validate = this.ajvFor(tool).compile(tool.inputSchema);
      } catch {
        validate = null;
      }
      this.compiled.set(tool, validate);
    }
    return validate;
  }
}

const OLD_DRAFT = /json-schema\.org\/draft-0[4-7]\/schema/;

function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "the arguments" : error.instancePath;
  const allowed = error.keyword === "enum" ? ` (${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})` : "";
  const extra = error.keyword === "additionalProperties" ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : "";
  return `${where} ${error.message ?? "is invalid"}${allowed}${extra} [schema ${error.schemaPath}]`;
}
