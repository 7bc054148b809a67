import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { JsonValue } from "@tapedeck/protocol";
import { mergeShapes, shapeOf } from "./observed-shape.js";
import { schemaToType } from "./schema-to-type.js";

const render = (values: JsonValue[]) =>
  schemaToType(values.map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b)), { style: "prompt" });

describe("observed result shapes", () => {
  it("records keys and types, never values", () => {
    const shape = shapeOf({ token: "sk-secret-value", count: 3, tags: ["a"], nested: { ok: true } });
    assert.doesNotMatch(JSON.stringify(shape), /sk-secret-value|"a"/);
    assert.equal(render([{ token: "x", count: 3, tags: ["a"], nested: { ok: true } }]), "{ count: number, nested: { ok: boolean }, tags: string[], token: string }");
  });

  it("a key missing from some results is optional; differing types become unions", () => {
    assert.equal(render([{ a: 1, b: "x" }, { a: "one" }]), "{ a: number | string, b?: string }");
    assert.equal(render([[{ id: 1 }], [{ id: 2, name: "n" }], []]), "{ id: number, name?: string }[]");
  });

  it("keys that are Object.prototype's members are kept as keys (a tool's data is never assigned into, nor looked up on, a prototype)", () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"constructor":1}') as JsonValue;
    const shape = shapeOf(parsed) as { properties: Record<string, unknown>; required: string[] };
    assert.deepEqual(Object.keys(shape.properties), ["__proto__", "constructor"]);
    assert.equal(Object.getPrototypeOf(shape.properties), Object.prototype);
    assert.deepEqual(shape.required, ["__proto__", "constructor"]);
    // `constructor` only on one side is optional, not merged with Object.prototype.constructor.
    assert.equal(render([{ constructor: 1 }, { toString: "x" }]), "{ constructor?: number, toString?: string }");
  });

  it("stays bounded for erratic tools (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 6 }) as fc.Arbitrary<JsonValue>, { minLength: 1, maxLength: 20 }), (values) => {
        const shape = values.map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b));
        assert.ok(JSON.stringify(shape).length < 200_000);
        schemaToType(shape, { style: "ts" });
      }),
      { numRuns: 200 },
    );
  });
});
