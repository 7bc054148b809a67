import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { CHUNKING, chunkText } from "./chunking.js";

const words = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `w${i + from}`);

void describe("chunking", () => {
  it("800-word chunks overlapping by 120 words (15 %), in order, covering every word", () => {
    const text = words(2_000).join(" ");
    const chunks = chunkText(text).map((chunk) => chunk.split(" "));
    assert.deepEqual(
      chunks.map((c) => [c[0], c.length]),
      [
        ["w0", 800],
        ["w680", 800],
        ["w1360", 640],
      ],
    );
    assert.deepEqual(chunks[1]!.slice(0, 120), chunks[0]!.slice(680), "the overlap is shared");
  });

  it("keeps the text's own spacing and line breaks; a short text is one chunk; no words, no chunks", () => {
    assert.deepEqual(chunkText("  # Title\n\nsome   words\there\n"), ["# Title\n\nsome   words\there"]);
    assert.deepEqual(chunkText("one"), ["one"]);
    assert.deepEqual(chunkText(" \n\t "), []);
  });

  it("a last chunk shorter than the minimum joins the one before", () => {
    const options = { words: 100, overlap: 0.1, minWords: 50 };
    const chunks = chunkText(words(130).join(" "), options).map((c) => c.split(" "));
    assert.deepEqual(
      chunks.map((c) => [c[0], c.length]),
      [["w0", 130]],
      "the 40 words from w90 are fewer than 50",
    );
    const kept = chunkText(words(200).join(" "), options).map((c) => c.split(" "));
    assert.deepEqual(
      kept.map((c) => [c[0], c.length]),
      [
        ["w0", 100],
        ["w90", 110],
      ],
      "the 20 words after w180 join the chunk before",
    );
  });

  it("property: any text's chunks cover all its words in order, each at most words + minWords long", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3_000 }), (count) => {
        const all = words(count);
        const chunks = chunkText(all.join(" ")).map((c) => c.split(" "));
        if (count === 0) return chunks.length === 0;
        const step = CHUNKING.words - Math.round(CHUNKING.words * CHUNKING.overlap);
        const covered = new Set(chunks.flat());
        return (
          covered.size === count &&
          chunks.every((c, i) => c[0] === `w${i * step}` && c.length <= CHUNKING.words + CHUNKING.minWords) &&
          chunks.at(-1)!.at(-1) === `w${count - 1}`
        );
      }),
    );
  });
});
