import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/**
 * The validators of the schemas a user tool's call checks (its output schema, the workspace
 * tools' arguments), compiled once per schema object: the catalogue keeps one object per pinned
 * schema, so a tool's calls share its validators. Used by the TypeScript and WebAssembly runners.
 * First error only (`allErrors: false`): a tool's result is refused, not explained in full.
 */
export class CompiledSchemas {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  readonly #validators = new WeakMap<object, ValidateFunction>();

  get(schema: object): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (validate === undefined) {
      validate = this.#ajv.compile(schema);
      this.#validators.set(schema, validate);
    }
    return validate;
  }
}
