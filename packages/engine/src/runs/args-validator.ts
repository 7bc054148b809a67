import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { toolFailure, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";

/**
 * Validates a call's arguments against its tool's pinned input schema before anything is
 * recorded or sent. Schemas come from the outside world, so the validator is lenient about
 * unknown keywords and formats; a schema that cannot be compiled validates nothing rather than
 * blocking every call (registration reports it).
 */
export class ArgsValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
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
      this.ajv.compile(tool.inputSchema);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  private compile(tool: PinnedTool): ValidateFunction | null {
    let validate = this.compiled.get(tool);
    if (validate === undefined) {
      try {
        validate = this.ajv.compile(tool.inputSchema);
      } catch {
        validate = null;
      }
      this.compiled.set(tool, validate);
    }
    return validate;
  }
}

function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "the arguments" : error.instancePath;
  const allowed = error.keyword === "enum" ? ` (${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})` : "";
  const extra = error.keyword === "additionalProperties" ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : "";
  return `${where} ${error.message ?? "is invalid"}${allowed}${extra} [schema ${error.schemaPath}]`;
}
