/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): merges ranked lists whose scores
 * cannot be compared (BM25 and cosine similarity) by rank alone. An item's score is the sum over
 * the lists of 1 / (k + rank), ranks from 1; k = 60 is the paper's value, and IronClaw's.
 */

export const RRF_K = 60;

/** Items of all `lists` (identified by `key`), best first, each with its fused score. */
export function fuseByRank<T>(lists: readonly (readonly T[])[], key: (item: T) => string, k = RRF_K): { readonly item: T; readonly score: number }[] {
  const fused = new Map<string, { item: T; score: number }>();
  for (const list of lists) {
    list.forEach((item, index) => {
      const id = key(item);
      const entry = fused.get(id) ?? { item, score: 0 };
      entry.score += 1 / (k + index + 1);
      fused.set(id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
