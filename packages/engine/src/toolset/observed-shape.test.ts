import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { JsonValue } from "@tapedeck/protocol";
import { Ajv2020 } from "ajv/dist/2020.js";
import { looksLikeData } from "./data-keys.js";
import { declarableShape, mergeShapes, shapeOf } from "./observed-shape.js";
import { schemaToType } from "./schema-to-type.js";

const render = (values: JsonValue[]) =>
  schemaToType(
    values.map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b)),
    { style: "prompt" },
  );

describe("observed result shapes", () => {
  it("records keys and types, never values", () => {
    const shape = shapeOf({ token: "sk-secret-value", count: 3, tags: ["a"], nested: { ok: true } });
    assert.doesNotMatch(JSON.stringify(shape), /sk-secret-value|"a"/);
    assert.equal(
      render([{ token: "x", count: 3, tags: ["a"], nested: { ok: true } }]),
      "{ count: number, nested: { ok: boolean }, tags: string[], token: string }",
    );
  });

  it("a key missing from some results is optional; differing types become unions", () => {
    assert.equal(render([{ a: 1, b: "x" }, { a: "one" }]), "{ a: number | string, b?: string }");
    assert.equal(render([[{ id: 1 }], [{ id: 2, name: "n" }], []]), "{ id: number, name?: string }[]");
  });

  it("keys that are Object.prototype's members are data, never assigned into nor looked up on a prototype", () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"constructor":1}') as JsonValue;
    const shape = shapeOf(parsed) as { properties: Record<string, unknown>; required: string[]; additionalProperties: unknown };
    // `constructor` is a name and stays one; `__proto__` cannot be declared safely, so the object is a record of its values.
    assert.deepEqual(Object.keys(shape.properties), ["constructor"]);
    assert.equal(Object.getPrototypeOf(shape.properties), Object.prototype);
    assert.deepEqual(shape.required, ["constructor"]);
    assert.match(JSON.stringify(shape.additionalProperties), /"polluted"/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
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

/** Data an object may be keyed by: emails, ids, hashes, numbers, dates, header names. */
const dataKey = fc.oneof(
  fc.emailAddress(),
  fc.uuid(),
  fc.nat().map(String),
  fc.stringMatching(/^[0-9a-f]{40}$/),
  fc.stringMatching(/^user_[0-9]{4,8}$/),
  fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.stringMatching(/^[A-Z][a-z]+-[A-Z][a-z]+$/),
);

/** Every property name a shape gives, at any depth. */
function propertyNames(shape: JsonValue): string[] {
  if (typeof shape !== "object" || shape === null) return [];
  if (Array.isArray(shape)) return shape.flatMap(propertyNames);
  const own = typeof shape.properties === "object" && shape.properties !== null && !Array.isArray(shape.properties) ? Object.keys(shape.properties) : [];
  return [...own, ...Object.values(shape).flatMap(propertyNames)];
}

describe("observed shapes of objects keyed by data", () => {
  const ts = (values: JsonValue[]) =>
    schemaToType(
      values.map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b)),
      { style: "ts" },
    );

  it("an object keyed by emails, ids, hashes or numbers is a Record of its values' type", () => {
    assert.equal(render([{ "alice@example.com": { visits: 3 }, "bob@example.org": { visits: 1 } }]), "{ [key: string]: { visits: number } }");
    assert.equal(render([{ "123": "a", "456": "b" }]), "{ [key: string]: string }");
    assert.equal(render([{ "0f4b8c2e9d1a7b3c5e6f8a9b0c1d2e3f4a5b6c7d": true }]), "{ [key: string]: boolean }");
    assert.equal(render([{ user_12345: 1, user_67890: 2 }]), "{ [key: string]: number }");
    assert.equal(render([{ "550e8400-e29b-41d4-a716-446655440000": { name: "x" } }]), "{ [key: string]: { name: string } }");
    assert.equal(render([{ data: { "Content-Type": "text/plain" } }]), "{ data: { [key: string]: string } }");
  });

  it("an object with very many keys is a Record, not a list of its keys", () => {
    const many = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`field${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`, i]),
    );
    assert.equal(render([many]), "{ [key: string]: number }");
  });

  it("only identifier-like keys that recur keep their name", () => {
    const first = { total: 2, page: 1, "alice@example.com": { visits: 3 } };
    const second = { total: 5, "carol@example.net": { visits: 2 } };
    assert.equal(ts([first, second]), "{ total: number; [key: string]: { visits: number } | number }");
    assert.equal(
      render([first]),
      "{ page: number, total: number, [key: string]: { visits: number } | number }",
      "names stay named until a result without them",
    );
    // Maps from names to values: two results sharing no key are keyed by data.
    const a = { alice: 1, bob: 2, carol: 3, dave: 4, erin: 5 };
    const b = { frank: 6, grace: 7, heidi: 8, ivan: 9 };
    assert.equal(render([a, b]), "{ [key: string]: number }");
    assert.equal(
      render([
        { id: 1, name: "x" },
        { id: 2, email: "y" },
      ]),
      "{ email?: string, id: number, name?: string }",
      "a structure whose keys recur stays one",
    );
  });

  it("a shape recorded before keys were judged is declared without its data keys", () => {
    const recorded = {
      type: "object",
      properties: { "alice@example.com": { type: "number" }, total: { type: "number" } },
      required: ["alice@example.com", "total"],
    };
    assert.equal(schemaToType(declarableShape(recorded), { style: "prompt" }), "{ total: number, [key: string]: number }");
    const clean = shapeOf({ id: 1, tags: ["a"], nested: { ok: true } });
    assert.deepEqual(declarableShape(clean), clean, "a clean shape comes back unchanged");
  });

  it("no data key ever becomes a property name, wherever it is (property)", () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue({ maxDepth: 1 }),
        fc.array(tie("node"), { maxLength: 3 }),
        fc.dictionary(fc.oneof(dataKey, fc.constantFrom("id", "name", "items")), tie("node"), { maxKeys: 5 }),
      ),
    })).node as fc.Arbitrary<JsonValue>;
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 6 }), (values) => {
        const shape = values.map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b));
        const names = propertyNames(shape);
        assert.deepEqual(names.filter(looksLikeData), [], JSON.stringify(shape));
        const text = schemaToType(shape, { style: "ts" });
        for (const key of values.flatMap(keysOf)) if (looksLikeData(key) && key.length > 3) assert.ok(!text.includes(JSON.stringify(key)), `${key} in ${text}`);
      }),
      { numRuns: 300 },
    );
  });

  it("every value a shape was made from conforms to it (property)", () => {
    const ajv = new Ajv2020({ strict: false });
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>, { minLength: 1, maxLength: 8 }), (values) => {
        const shape = values.map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b));
        const validate = ajv.compile(shape as object);
        for (const value of values)
          assert.ok(validate(value), `${JSON.stringify(value)} does not fit ${JSON.stringify(shape)}: ${ajv.errorsText(validate.errors)}`);
        assert.ok(ajv.validate(declarableShape(shape) as object, values[0]), "and to its declarable form");
      }),
      { numRuns: 300 },
    );
  });
});

function keysOf(value: JsonValue): string[] {
  if (typeof value !== "object" || value === null) return [];
  if (Array.isArray(value)) return value.flatMap(keysOf);
  return [...Object.keys(value), ...Object.values(value).flatMap(keysOf)];
}
