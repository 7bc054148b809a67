import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { VirtualClock } from "../../clock.js";
import type { LibraryTool } from "../library-tool.js";
import { baseContext, failureOf, resultOf } from "../test-support/call-tool.js";
import { echoTool } from "./echo.js";
import { jsonTools, MAX_MATCHES } from "./json-tools.js";
import { timeTool } from "./time.js";

const tool = (name: string): LibraryTool<never> => jsonTools.find((t) => t.name === name)!;
const ctx = baseContext();

void describe("echo.echo", () => {
  it("answers its message unchanged", async () => {
    assert.deepEqual(await resultOf(echoTool, { message: "héllo\n" }, ctx), { message: "héllo\n" });
  });
});

void describe("time.now", () => {
  // Tuesday 3 March 2026, 22:30:05.123 UTC.
  const at = Date.UTC(2026, 2, 3, 22, 30, 5, 123);
  const clock = new VirtualClock(at);
  const timeCtx = { now: () => clock.now(), signal: new AbortController().signal };

  it("reads the injected clock, not the machine's, in every format", async () => {
    assert.deepEqual(await resultOf(timeTool, {}, timeCtx), { value: "2026-03-03T22:30:05.123Z", format: "iso8601", timezone: "UTC", utcOffset: "+00:00" });
    assert.deepEqual(await resultOf(timeTool, { format: "unix" }, timeCtx), { value: 1772577005, format: "unix", timezone: "UTC", utcOffset: "+00:00" });
    const human = await resultOf(timeTool, { format: "human", timezone: "America/Los_Angeles" }, timeCtx);
    assert.deepEqual(human, { value: "Tuesday, March 3, 2026 at 2:30:05 PM PST", format: "human", timezone: "America/Los_Angeles", utcOffset: "-08:00" });
  });

  it("any IANA zone, half and quarter hours, the date line, and daylight saving time", async () => {
    const iso = async (timezone: string, now = at) => (await resultOf(timeTool, { timezone }, { ...timeCtx, now: () => now })).value;
    assert.equal(await iso("Asia/Kolkata"), "2026-03-04T04:00:05.123+05:30");
    assert.equal(await iso("Asia/Kathmandu"), "2026-03-04T04:15:05.123+05:45");
    assert.equal(await iso("Pacific/Kiritimati"), "2026-03-04T12:30:05.123+14:00");
    assert.equal(await iso("Pacific/Pago_Pago"), "2026-03-03T11:30:05.123-11:00");
    // New York moves to EDT on 8 March 2026 at 02:00 local (07:00 UTC).
    assert.equal(await iso("America/New_York", Date.UTC(2026, 2, 8, 6, 59, 59, 0)), "2026-03-08T01:59:59.000-05:00");
    assert.equal(await iso("America/New_York", Date.UTC(2026, 2, 8, 7, 0, 0, 0)), "2026-03-08T03:00:00.000-04:00");
    const canonical = await resultOf(timeTool, { timezone: "europe/paris" }, timeCtx);
    assert.equal(canonical.timezone, "Europe/Paris");
    assert.equal(canonical.value, "2026-03-03T23:30:05.123+01:00");
  });

  it("virtual time moves the answer", async () => {
    clock.setTimer(at + 3_600_000, () => undefined);
    await clock.virtual.advance();
    assert.equal((await resultOf(timeTool, {}, timeCtx)).value, "2026-03-03T23:30:05.123Z");
  });

  it("an unknown zone is invalid_arguments naming examples", async () => {
    const failure = await failureOf(timeTool, { timezone: "Mars/Olympus" }, timeCtx);
    assert.equal(failure.code, "invalid_arguments");
    assert.match(failure.message, /"Mars\/Olympus" is not a time zone.*Europe\/Paris/);
  });
});

void describe("json tools", () => {
  it("parse gives the value, or the line and column where the text goes wrong", async () => {
    assert.deepEqual(await resultOf(tool("parse"), { text: '{"a":[1,2,{"b":null}]}' }, ctx), { value: { a: [1, 2, { b: null }] } });
    const cases: [string, number, number][] = [
      ['{\n  "a": 1,\n  "b": }', 3, 8],
      ["[1, 2", 1, 6],
      ['{"a":1} x', 1, 9],
      ["{a:1}", 1, 2],
      ['"abc', 1, 5],
      ["", 1, 1],
    ];
    for (const [text, line, column] of cases) {
      const failure = await failureOf(tool("parse"), { text }, ctx);
      assert.equal(failure.code, "invalid_json");
      assert.match(failure.message, new RegExp(`at line ${line}, column ${column} `), `${JSON.stringify(text)}: ${failure.message}`);
    }
    const long = await failureOf(tool("parse"), { text: `[${"1,".repeat(10_000)}}` }, ctx);
    assert.ok(long.message.length < 400, "the message does not quote the whole text");
  });

  it("stringify indents by 2 by default, or as asked", async () => {
    assert.deepEqual(await resultOf(tool("stringify"), { value: { a: [1] } }, ctx), { text: '{\n  "a": [\n    1\n  ]\n}' });
    assert.deepEqual(await resultOf(tool("stringify"), { value: { a: [1] }, indent: 0 }, ctx), { text: '{"a":[1]}' });
  });

  it("query follows RFC 9535: filters, descendants, functions, normalized paths", async () => {
    const data = {
      users: [
        { name: "Alice", age: 30 },
        { name: "Bob", age: 17 },
        { name: "Ann", age: 41 },
      ],
      "odd key": { name: "x" },
    };
    assert.deepEqual(await resultOf(tool("query"), { data, path: "$.users[?@.age > 18].name" }, ctx), {
      matches: [
        { path: "$['users'][0]['name']", value: "Alice" },
        { path: "$['users'][2]['name']", value: "Ann" },
      ],
      count: 2,
    });
    assert.equal((await resultOf(tool("query"), { data, path: "$..name" }, ctx)).count, 4);
    assert.equal((await resultOf(tool("query"), { data, path: "$.users[?match(@.name, 'A.*')]" }, ctx)).count, 2);
    assert.deepEqual((await resultOf(tool("query"), { data, path: "$['odd key'].name" }, ctx)).matches, [{ path: "$['odd key']['name']", value: "x" }]);
    assert.deepEqual(await resultOf(tool("query"), { data, path: "$.nothing" }, ctx), { matches: [], count: 0 });
  });

  it("query is bounded and says how many it left out; a bad expression says what is wrong", async () => {
    const many = await resultOf(tool("query"), { data: Array.from({ length: MAX_MATCHES + 5 }, (_, i) => i), path: "$[*]" }, ctx);
    assert.equal((many.matches as unknown[]).length, MAX_MATCHES);
    assert.equal(many.count, MAX_MATCHES + 5);
    assert.match(many.note as string, /^5 more matches were left out/);
    const bad = await failureOf(tool("query"), { data: {}, path: "users[0]" }, ctx);
    assert.equal(bad.code, "invalid_arguments");
    assert.match(bad.message, /"users\[0\]" is not a JSONPath expression \(RFC 9535\)/);
  });

  it("validate checks draft 2020-12 and lists where and why; a schema that does not compile is a failure", async () => {
    const schema = {
      type: "object",
      properties: { age: { type: "integer", minimum: 0 }, tags: { type: "array", prefixItems: [{ const: "a" }] } },
      required: ["age"],
    };
    assert.deepEqual(await resultOf(tool("validate"), { data: { age: 3, tags: ["a"] }, schema }, ctx), { valid: true, errors: [], errorCount: 0 });
    const invalid = await resultOf(tool("validate"), { data: { age: -1, tags: ["b"] }, schema }, ctx);
    assert.equal(invalid.valid, false);
    assert.deepEqual(
      (invalid.errors as { path: string; keyword: string }[]).map((e) => [e.path, e.keyword]),
      [
        ["/age", "minimum"],
        ["/tags/0", "const"],
      ],
    );
    const broken = await failureOf(tool("validate"), { data: 1, schema: { type: "no-such-type" } }, ctx);
    assert.equal(broken.code, "invalid_schema");
    const withId = { $id: "https://example.com/s", type: "string" };
    await resultOf(tool("validate"), { data: "x", schema: withId }, ctx);
    assert.equal((await resultOf(tool("validate"), { data: 1, schema: withId }, ctx)).valid, false, "a schema's $id given twice is not 'already defined'");
  });
});
