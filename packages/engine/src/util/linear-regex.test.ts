import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_PROGRAM, MAX_SUBJECT_LENGTH, compileRegex, type LinearRegex } from "./linear-regex.js";

function regex(source: string, flags = ""): LinearRegex {
  const compiled = compileRegex(source, flags);
  if (!compiled.ok) assert.fail(`${source}: ${compiled.problem}`);
  return compiled.regex;
}

/** Patterns of every construct the engine accepts, over a small alphabet so that random texts often match. */
const atom = fc.constantFrom(
  "a",
  "b",
  "c",
  "A",
  ".",
  "\\d",
  "\\w",
  "\\W",
  "\\s",
  "[ab]",
  "[^a]",
  "[a-c]",
  "[\\d_]",
  "\\u{1F600}",
  "😀",
  "\\uD83D\\uDE00",
  "\\.",
  "é",
  "\\p{Lu}",
  "[^]",
  "\\x41",
  "_",
  "\\n",
);
const pattern: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    atom,
    atom,
    fc.constantFrom("^", "$", "\\b", "\\B", ""),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => a + b),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => `(?:${a}|${b})`),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => `(${a}|${b})`),
    fc.tuple(tie("node"), fc.constantFrom("*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?", "{1,3}?")).map(([n, q]) => `(?:${n})${q}`),
    tie("node").map((n) => `(?<g>${n})`),
  ),
})).node;
const text = fc
  .array(fc.constantFrom("a", "b", "c", "A", "B", "1", "_", " ", "\n", "😀", "é", "É", ".", "ſ", "K", "\uD83D"), { maxLength: 10 })
  .map((parts) => parts.join(""));

/**
 * `test` as ECMAScript specifies it (RegExpBuiltinExec): V8's matcher anchored (`y`) at each
 * position in turn, moving one code point at a time. (V8's own unanchored search also tries
 * positions inside a surrogate pair, so `/\B/u.test("a😀a")` is true there, at index 2.)
 */
function reference(source: string, flags: string, text: string): boolean {
  const sticky = new RegExp(source, `${flags}uy`);
  for (let at = 0; at <= text.length; at += (text.codePointAt(at) ?? 0) > 0xffff ? 2 : 1) {
    sticky.lastIndex = at;
    if (sticky.test(text)) return true;
  }
  return false;
}

describe("linear-time regular expressions", () => {
  it("answer test() exactly as ECMAScript specifies, by V8's own matcher, for every accepted pattern, flag and text (differential property)", () => {
    fc.assert(
      fc.property(pattern, fc.constantFrom("", "i", "m", "s", "ims"), fc.array(text, { minLength: 1, maxLength: 8 }), (source, flags, texts) => {
        const compiled = compileRegex(source, flags);
        if (!compiled.ok) return; // the generator only writes valid patterns, but some combinations (a quantified group of `^`) are refused by V8 itself
        for (const t of texts) assert.equal(compiled.regex.test(t), reference(source, flags, t), `/${source}/${flags}u on ${JSON.stringify(t)}`);
      }),
      { numRuns: 3000 },
    );
  });

  it("match the patterns approval rules are written with", () => {
    const writes = regex("_(create|update|delete|upload)$");
    assert.equal(writes.test("campaign_delete"), true);
    assert.equal(writes.test("campaign_delete_preview"), false);
    assert.equal(writes.test("asset_get"), false);
    assert.equal(regex("^gmv_max_", "i").test("GMV_MAX_campaign_get"), true);
    assert.equal(regex("^[a-z]+\\.(list|get)_\\w+$").test("github.list_issues"), true);
    assert.equal(regex("\\bdrop\\s+table\\b", "i").test("please DROP  TABLE users"), true);
    assert.equal(regex("\\bdrop\\s+table\\b", "i").test("backdrop tablet"), false);
    assert.equal(regex("a{3}").test("aa"), false);
    assert.equal(regex("a{3}").test("xaaax"), true);
    assert.equal(regex("").test(""), true);
  });

  it("run patterns that take V8 exponential time in time linear in the text", () => {
    // With V8, /^(a|a)*b$/ on 40 "a"s takes on the order of 2^40 steps; here it is 40 × a few instructions.
    const evil = regex("^(a|a)*b$");
    assert.equal(evil.test("a".repeat(40)), false);
    assert.equal(evil.test(`${"a".repeat(40)}b`), true);
    const nested = regex("^(a+)+$");
    assert.equal(nested.test(`${"a".repeat(MAX_SUBJECT_LENGTH - 1)}!`), false);
    const emptyLoop = regex("(a*)*b");
    assert.equal(emptyLoop.test("a".repeat(10_000)), false);
  });

  it("refuse what a linear-time engine cannot run, and say what to do", () => {
    const refused = (source: string, flags = "") => {
      const compiled = compileRegex(source, flags);
      assert.equal(compiled.ok, false, source);
      return compiled.ok ? "" : compiled.problem;
    };
    assert.match(refused("(a)\\1"), /backreference/);
    assert.match(refused("(?<x>a)\\k<x>"), /backreference/);
    assert.match(refused("a(?=b)"), /lookaround/);
    assert.match(refused("(?<!a)b"), /lookaround/);
    assert.match(refused("a", "g"), /only "i", "m", "s" and "u"/);
    assert.match(refused("a", "ii"), /each at most once/);
    assert.match(refused("(a"), /not a valid regular expression/);
    assert.match(refused("a{"), /not a valid regular expression/, "Unicode mode: a lone brace is an error, as in V8");
    assert.match(refused("x".repeat(1001)), /longer than 1000/);
    assert.match(refused("(?:a{1000}){1000}"), new RegExp(`more than ${MAX_PROGRAM} steps`));
    assert.match(refused("a{5000}"), /at most 2000 repetitions/);
  });

  it("do not test texts over the bound, and say so", () => {
    assert.equal(regex("a").test("b".repeat(MAX_SUBJECT_LENGTH + 1)), "tooLong");
    assert.equal(regex("a").test(`${"b".repeat(MAX_SUBJECT_LENGTH - 1)}a`), true);
  });
});
