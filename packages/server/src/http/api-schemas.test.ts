import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as api from "@tapedeck/protocol/api";
import { validatorCompiler } from "./validation.js";

/**
 * The API's JSON Schemas live in @tapedeck/protocol/api, checked against their types when they
 * compile; the server's validator (ajv, strict) is what refuses a keyword it does not know. Every
 * one must compile there, a schema that documents an answer (never validated) as much as one that
 * validates a request, so a misspelt keyword cannot hide in the OpenAPI document.
 */
describe("the API's schemas", () => {
  it("every schema of @tapedeck/protocol/api compiles in the server's validator", () => {
    const schemas = Object.entries(api).filter((entry): entry is [string, object] => typeof entry[1] === "object" && entry[1] !== null && "type" in entry[1]);
    assert.ok(schemas.length > 40, `found ${schemas.length} schemas`);
    for (const [name, schema] of schemas) {
      for (const httpPart of ["body", "querystring"]) {
        assert.doesNotThrow(() => validatorCompiler({ schema, httpPart, method: "POST", url: "/" }), `${name} (${httpPart})`);
      }
    }
  });
});
