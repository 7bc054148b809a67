import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { findKeyShapes } from "./key-shapes.js";
import { LeakScanner } from "./leak-scanner.js";

/**
 * The scanner runs on every tool result, and a tool (or a server behind `fetch`) chooses what it
 * answers: its time must stay linear whatever the input. These tests generate adversarial
 * inputs — near misses of every shape, repeated so that a token could start everywhere — and
 * check that scanning 1 MB stays well under a second and that 4× the input costs about 4× the
 * time, not 16×. They also check what every scan must give: ordered matches inside the text, and
 * an output in which a second scan finds nothing.
 */

/** Prefixes and fragments of every shape, each one character or one segment short of a match. */
const NEAR_MISSES = [
  "sk-",
  "sk-ant-",
  "sk-proj-",
  "sk_live_",
  "rk_test_",
  "whsec_",
  "ghp_",
  "github_pat_",
  "xoxb-",
  "AKIA",
  "ASIA",
  "AIza",
  "eyJ",
  "eyJhbGciOiJI.",
  ".eyJzdWIiOiIx",
  "-----BEGIN RSA PRIVATE KEY-----\n",
  "-----BEGIN ",
  "-----END ",
  "-----",
  "Bearer ",
  "bearer\t",
  "aws_secret_access_key=",
  '"SecretAccessKey":"',
  "awssecretkey",
  "/",
  "+",
  "=",
  ".",
  " ",
  "\n",
  "_",
  "-",
];

const piece = fc.oneof(fc.constantFrom(...NEAR_MISSES), fc.stringMatching(/^[A-Za-z0-9+/=._-]{1,16}$/));
/** A unit of text that, repeated, puts a near miss everywhere. */
const unit = fc.array(piece, { minLength: 1, maxLength: 10 }).map((parts) => parts.join(""));

const HANDCRAFTED = [
  "sk-",
  "sk-ant-a",
  "ghp_a",
  "-----BEGIN RSA PRIVATE KEY-----\n",
  "-----BEGIN RSA PRIVATE KEY-----",
  "-----BEGIN X PRIVATE KEY-----\n-----END ",
  "bearer ",
  "Bearer a/",
  "eyJaaaaaaaaaaa.",
  "eyJaaaaaaaaaaa.eyJbbbbbbbbbbb",
  "aws_secret_access_key=",
  "/awssecretkey",
  "secret_access_key: a/",
  "AKIAAAAAAAAAAAAAAAAAA",
  "AIza",
  "a".repeat(1000),
  "-",
];

const KB = 1024;

function grow(text: string, size: number): string {
  return text.repeat(Math.ceil(size / text.length)).slice(0, size);
}

/** The fastest of 5 timings of scanning `text`, ms: noise (GC, a busy neighbour) only ever adds time. */
function scanMs(scanner: LeakScanner, text: string): number {
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    scanner.scanText(text);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/**
 * Times 256 KB and 1 MB of `unit`. A super-linear scan is slow every time; a loaded machine only
 * sometimes: the growth is measured up to 3 times and the best kept.
 */
function growth(scanner: LeakScanner, unit: string): { small: number; big: number; ratio: number } {
  let best = { small: 0, big: Infinity, ratio: Infinity };
  for (let attempt = 0; attempt < 3 && best.ratio >= 10; attempt++) {
    const small = scanMs(scanner, grow(unit, 256 * KB));
    const big = scanMs(scanner, grow(unit, 1024 * KB));
    // Ratios of sub-millisecond timings are noise: below 2 ms only the absolute bound matters.
    const ratio = small >= 2 ? big / small : 0;
    if (ratio < best.ratio) best = { small, big, ratio };
  }
  return best;
}

describe("leak scanner: linear time on adversarial input (fuzz)", () => {
  const scanner = new LeakScanner(["known-secret-value-1", { value: "another/known+secret==", name: "X" }]);
  // Warm the JIT, so the first measured size does not pay for compilation.
  scanner.scanText(grow(NEAR_MISSES.join(""), 256 * KB));

  it("scans 1 MB of near misses in well under a second, and 4× the input costs ~4× the time", () => {
    const units = [...HANDCRAFTED, ...fc.sample(unit, { numRuns: 30, seed: 20260101 })];
    let worst = { unit: "", big: 0, ratio: 0 };
    for (const u of units) {
      const { small, big, ratio } = growth(scanner, u);
      if (big > worst.big) worst = { unit: u, big, ratio };
      assert.ok(big < 1000, `1 MB of ${JSON.stringify(u.slice(0, 60))} took ${big.toFixed(0)} ms`);
      assert.ok(ratio < 10, `4× the input of ${JSON.stringify(u.slice(0, 60))} took ${ratio.toFixed(1)}× the time (${small.toFixed(1)} → ${big.toFixed(1)} ms): not linear`);
    }
    assert.ok(worst.big < 1000);
  });

  it("scans arbitrary near-miss text into ordered, in-bounds matches, and leaves nothing a second scan would find", () => {
    const text = fc.array(fc.oneof(piece, fc.string({ maxLength: 8 }), fc.constantFrom("ghp_" + "a1B2c3D4e5".repeat(4), "AKIAIOSFODNN7EXAMPLE", "known-secret-value-1")), { maxLength: 40 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, (input) => {
        let previousEnd = 0;
        for (const match of findKeyShapes(input)) {
          assert.ok(match.start >= previousEnd && match.end > match.start && match.end <= input.length, JSON.stringify({ input, match }));
          previousEnd = match.end;
        }
        const once = scanner.scanText(input).value;
        assert.deepEqual(findKeyShapes(once), [], JSON.stringify({ input, once }));
        assert.ok(!once.includes("known-secret-value-1"));
        assert.equal(scanner.scanText(once).value, once);
      }),
      { numRuns: 500, seed: 7 },
    );
  });
});
