/**
 * canonicalJson takes a fast path (`JSON.stringify`) when a value is canonical already: it must
 * write exactly what the RFC 8785 library writes, and throw where it throws, for any value.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import canonicalize from "canonicalize";
import fc from "fast-check";
import type { JsonValue } from "@tapedeck/protocol";
import { canonicalJson, canonicalValue } from "./canonical-json.js";

/** Keys and strings that catch the fast path out: integer-like keys, surrogates (lone or paired), `__proto__`. */
const tricky = fc.constantFrom("", "a", "b", "B", "10", "9", "1", "__proto__", "é", "\u{1F600}", "\uD800", "x\uDC00y");
const text = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), tricky);
const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.constant(-0),
    text,
    fc.array(tie("value")),
    fc.dictionary(fc.oneof(text, fc.string()), tie("value")),
  ),
})).value;

function outcome(fn: () => string): { text: string } | { error: true } {
  try {
    return { text: fn() };
  } catch {
    return { error: true };
  }
}

void describe("canonicalJson", () => {
  it("writes what canonicalize writes, and throws where it throws", () => {
    fc.assert(
      fc.property(json, (value) => {
        assert.deepEqual(
          outcome(() => canonicalJson(value)),
          outcome(() => canonicalize(value) ?? ""),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it("canonicalValue has the canonical text, and keeps a value whose keys are in order as is", () => {
    fc.assert(
      // Through JSON, as arguments arrive: plain objects and arrays.
      fc.property(
        json.map((v) => JSON.parse(JSON.stringify(v)) as JsonValue),
        (value) => {
          const expected = outcome(() => canonicalize(value) ?? "");
          if ("error" in expected) return;
          assert.equal(canonicalize(canonicalValue(value)), expected.text);
        },
      ),
      { numRuns: 1000 },
    );
    const args = { a: 1, b: [true, null, "x", { c: -2.5 }] };
    assert.equal(canonicalValue(args), args);
  });

  it("leaves deep, sparse and non-plain values to canonicalize", () => {
    let deep: JsonValue = 1;
    for (let i = 0; i < 200; i++) deep = { a: deep };
    assert.equal(canonicalJson(deep), canonicalize(deep));
    const holes = new Array<number>(3);
    holes[0] = 1;
    holes[2] = 3;
    const sparse = holes as unknown as JsonValue;
    assert.equal(canonicalJson(sparse), canonicalize(sparse));
    const withToJson = { b: 1, a: { toJSON: () => ({ z: 1, y: 2 }) } } as unknown as JsonValue;
    assert.equal(canonicalJson(withToJson), canonicalize(withToJson));
    const arrayWithToJson = Object.assign([2, 1], { toJSON: () => ({ z: 1, y: 2 }) }) as unknown as JsonValue;
    assert.equal(canonicalJson(arrayWithToJson), canonicalize(arrayWithToJson));
  });
});
