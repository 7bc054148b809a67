import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue } from "@tapedeck/protocol";
import { parsePointer, readPointer, replaceAt } from "../toolset/json-pointer.js";
import { REDACTED_PREFIX, redactSensitive, sensitiveParamsProblems } from "../toolset/sensitive-params.js";

const at = (value: JsonValue, pointer: string) => {
  const parsed = parsePointer(pointer);
  assert.ok(parsed.ok, pointer);
  const found = readPointer(value, parsed.tokens);
  return found.found ? found.value : undefined;
};

void describe("JSON pointers (RFC 6901)", () => {
  it("evaluates the RFC's examples", () => {
    const doc = { foo: ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, 'k"l': 6, " ": 7, "m~n": 8 };
    const expected: [string, JsonValue][] = [
      ["", doc],
      ["/foo", ["bar", "baz"]],
      ["/foo/0", "bar"],
      ["/", 0],
      ["/a~1b", 1],
      ["/c%d", 2],
      ["/e^f", 3],
      ["/g|h", 4],
      ["/i\\j", 5],
      ['/k"l', 6],
      ["/ ", 7],
      ["/m~0n", 8],
    ];
    for (const [pointer, value] of expected) assert.deepEqual(at(doc, pointer), value, pointer);
  });

  it("names one place only: no leading zeros or '-' for arrays, no inherited keys, bad escapes refused", () => {
    const doc = { list: ["a", "b"], plain: {} };
    assert.equal(at(doc, "/list/01"), undefined);
    assert.equal(at(doc, "/list/-"), undefined);
    assert.equal(at(doc, "/list/2"), undefined);
    assert.equal(at(doc, "/plain/constructor"), undefined);
    assert.equal(at(doc, "/plain/__proto__"), undefined);
    assert.equal(at(doc, "/list/0/x"), undefined);
    assert.equal(parsePointer("/a~2").ok, false);
    assert.equal(parsePointer("/a~").ok, false);
    assert.equal(parsePointer("a").ok, false);
    assert.equal(parsePointer(`/${"a".repeat(1023)}`).ok, true);
    assert.match((parsePointer(`/${"a".repeat(1024)}`) as { problem: string }).problem, /is longer than 1024 characters/);
  });

  it("replaceAt copies only the path it changes and never mutates", () => {
    const doc = { a: { b: [1, 2, 3] }, c: { d: 1 } };
    const snapshot = structuredClone(doc);
    const changed = replaceAt(doc, ["a", "b", "1"], () => "two") as typeof doc & { a: { b: JsonValue[] } };
    assert.deepEqual(changed, { a: { b: [1, "two", 3] }, c: { d: 1 } });
    assert.deepEqual(doc, snapshot);
    assert.equal(changed.c, doc.c, "untouched branches are shared");
    assert.equal(
      replaceAt(doc, ["nope", "x"], () => 0),
      doc,
    );
  });
});

void describe("sensitiveParams", () => {
  const key = Buffer.from("k".repeat(32));

  it("replaces each named value with a keyed hash that is stable across key order and differs by key", () => {
    const args = { to: "bob", auth: { token: "s3cret", scopes: ["a", "b"] }, headers: { authorization: "Bearer x" } };
    const redacted = redactSensitive(args, ["/auth", "/headers/authorization", "/missing"], key) as typeof args & {
      auth: string;
      headers: { authorization: string };
    };
    assert.equal(redacted.to, "bob");
    assert.ok(redacted.auth.startsWith(REDACTED_PREFIX));
    assert.ok(!JSON.stringify(redacted).includes("s3cret") && !JSON.stringify(redacted).includes("Bearer x"));
    const reordered = redactSensitive({ ...args, auth: { scopes: ["a", "b"], token: "s3cret" } }, ["/auth"], key) as { auth: string };
    assert.equal(reordered.auth, redacted.auth, "the same value gives the same marker");
    const otherKey = redactSensitive(args, ["/auth"], Buffer.from("j".repeat(32))) as { auth: string };
    assert.notEqual(otherKey.auth, redacted.auth);
    const otherValue = redactSensitive({ ...args, auth: { token: "other", scopes: ["a", "b"] } }, ["/auth"], key) as { auth: string };
    assert.notEqual(otherValue.auth, redacted.auth);
    assert.deepEqual(redactSensitive(redacted, ["/auth"], key), redacted, "redacting twice changes nothing");
    assert.equal(args.auth.token, "s3cret", "the arguments are not mutated");
  });

  it("refuses malformed pointers and the whole-arguments pointer", () => {
    assert.deepEqual(sensitiveParamsProblems(["/ok", "bad", ""]), [
      'sensitiveParams[1]: the JSON pointer "bad" must start with "/" (or be "" for the whole value)',
      'sensitiveParams[2]: "" would redact all the arguments; name the parts that are secret',
    ]);
  });
});
