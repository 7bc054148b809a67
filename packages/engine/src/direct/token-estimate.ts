/**
 * Token counts of result text, estimated: UTF-8 bytes / 3.5, rounded up. Budgets are checked on
 * every result, so the estimate must be cheap and deterministic (a result answered from the
 * journal must spill exactly as it did the first time); no tokenizer of every model API exists
 * in JavaScript anyway (Anthropic publishes none for its current models).
 *
 * Why bytes / 3.5: measured against OpenAI's o200k_base (js-tiktoken) on this repository's
 * samples, text has 4.2–4.7 bytes per token for JSON and English, 3.8 for TypeScript, 4.1 for
 * Chinese and Japanese (3 bytes per character, about 1.4 characters per token) and 3.0 for emoji.
 * Counting bytes rather than characters keeps CJK text from being underestimated threefold;
 * 3.5 rather than 4 errs on the side of spilling early (Claude's tokenizer is known to produce
 * more tokens than o200k for the same text). So the estimate is within about −15 % to +35 % of
 * o200k. The test `token-estimate.test.ts` pins these ratios.
 *
 * Images are not counted: they are never spilled, and their token cost depends on their pixels.
 */

export const BYTES_PER_TOKEN = 3.5;

export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_TOKEN);
}
