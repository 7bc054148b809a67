import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { findKeyShapes } from "./key-shapes.js";
import { LeakScanner } from "./leak-scanner.js";
import { grow, HANDCRAFTED, KB, NEAR_MISSES } from "../bench/leak-scan-corpus.js";

/**
 * The scanner runs on every tool result, and a tool (or a server behind `fetch`) chooses what it
 * answers: its time must stay linear whatever the input. These tests generate adversarial
 * inputs — near misses of every shape, repeated so that a token could start everywhere — and
 * check what every scan must give on them: it ends, its matches are ordered and inside the text,
 * and a second scan of its output finds nothing. That its time grows linearly is measured by
 * `npm run bench`, not asserted here.
 */

const piece = fc.oneof(fc.constantFrom(...NEAR_MISSES), fc.stringMatching(/^[A-Za-z0-9+/=._-]{1,16}$/));
/** A unit of text that, repeated, puts a near miss everywhere. */
const unit = fc.array(piece, { minLength: 1, maxLength: 10 }).map((parts) => parts.join(""));

describe("leak scanner on adversarial input (fuzz)", () => {
  const scanner = new LeakScanner(["known-secret-value-1", { value: "another/known+secret==", name: "X" }]);

  it("scans 1 MB of every adversarial unit to the end and leaves no key shape in its output", () => {
    // A scan that backtracks catastrophically never ends here (the test times out); how its time
    // grows with the input is measured by `npm run bench` (leak scan row), not asserted here.
    for (const u of [...HANDCRAFTED, ...fc.sample(unit, { numRuns: 30, seed: 20260101 })]) {
      const text = grow(u, 1024 * KB);
      const scanned = scanner.scanText(text).value;
      assert.deepEqual(findKeyShapes(scanned), [], JSON.stringify(u.slice(0, 60)));
    }
  });

  it("scans arbitrary near-miss text into ordered, in-bounds matches, and leaves nothing a second scan would find", () => {
    const text = fc
      .array(fc.oneof(piece, fc.string({ maxLength: 8 }), fc.constantFrom("ghp_" + "a1B2c3D4e5".repeat(4), "AKIAIOSFODNN7EXAMPLE", "known-secret-value-1")), {
        maxLength: 40,
      })
      .map((parts) => parts.join(""));
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
