/**
 * How a memory document is cut for search: windows of `words` words that overlap by
 * `overlap` of a window, so a passage that straddles a cut is whole in one of the two chunks.
 * IronClaw's values: 800 words, 15 % overlap, 50 words at least.
 *
 * Invariants:
 * - Chunks are slices of the original text (line breaks and spacing kept), in order; together
 *   they cover every word. A text with no words has no chunks.
 * - Every chunk but the first starts `words × (1 − overlap)` words after the one before.
 * - A last chunk shorter than `minWords` words is merged into the one before it (which then
 *   grows by that much); a document shorter than `minWords` is still one chunk.
 */

export interface ChunkOptions {
  readonly words: number;
  /** Fraction of a chunk shared with the next one, from 0 (none) to below 1. */
  readonly overlap: number;
  readonly minWords: number;
}

export const CHUNKING: ChunkOptions = { words: 800, overlap: 0.15, minWords: 50 };

export function chunkText(text: string, options: ChunkOptions = CHUNKING): string[] {
  const spans = [...text.matchAll(/\S+/g)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
  if (spans.length === 0) return [];
  const step = Math.max(1, Math.round(options.words * (1 - options.overlap)));
  const ranges: { first: number; last: number }[] = [];
  for (let first = 0; ; first += step) {
    const last = Math.min(first + options.words, spans.length) - 1;
    ranges.push({ first, last });
    if (last === spans.length - 1) break;
  }
  const tail = ranges.at(-1)!;
  const previous = ranges.at(-2);
  if (previous !== undefined && tail.last - tail.first + 1 < options.minWords) {
    ranges.pop();
    previous.last = tail.last;
  }
  return ranges.map(({ first, last }) => text.slice(spans[first]!.start, spans[last]!.end));
}
