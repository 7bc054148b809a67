import type { MemorySpace } from "../memory-space.js";
import { CORPUS_DOCUMENTS } from "./recall-corpus-docs.js";
import { CORPUS_QUERIES, type CorpusQuery } from "./recall-corpus-queries.js";

/**
 * Measures a memory space on the graded corpus: writes every document, runs every query, and
 * scores the top `k` documents returned. recall@k: the share of a query's relevant documents
 * (grade 1 or 2) among them, averaged over queries; MRR: the mean of 1 / rank of the first
 * relevant one (0 when none is in the top k); nDCG@k with the grades as gains.
 */

export interface RecallReport {
  readonly recallAtK: number;
  /** Recall counting only the documents that answer the query (grade 2). */
  readonly recallOfAnswersAtK: number;
  readonly mrr: number;
  readonly ndcgAtK: number;
  /** Queries whose answer (a grade 2 document) was not in the top k, for reading. */
  readonly missed: readonly { readonly query: string; readonly got: readonly string[] }[];
}

export async function loadCorpus(space: MemorySpace): Promise<void> {
  const signal = new AbortController().signal;
  for (const document of CORPUS_DOCUMENTS) {
    const written = await space.write(document.path, document.text, false, 0, signal);
    if (!written.ok) throw new Error(`${document.path}: ${written.message}`);
  }
}

export async function measureRecall(space: MemorySpace, k = 5, queries: readonly CorpusQuery[] = CORPUS_QUERIES): Promise<RecallReport> {
  const signal = new AbortController().signal;
  let recall = 0;
  let answers = 0;
  let reciprocal = 0;
  let ndcg = 0;
  const missed: { query: string; got: string[] }[] = [];
  for (const { query, relevant } of queries) {
    const got = (await space.search(query, k, signal)).hits.map((hit) => hit.path);
    const grades = Object.entries(relevant);
    const wanted = grades.map(([path]) => path);
    const answering = grades.filter(([, grade]) => grade === 2).map(([path]) => path);
    recall += wanted.filter((path) => got.includes(path)).length / wanted.length;
    answers += answering.filter((path) => got.includes(path)).length / answering.length;
    const first = got.findIndex((path) => path in relevant);
    reciprocal += first < 0 ? 0 : 1 / (first + 1);
    const dcg = got.reduce((sum, path, rank) => sum + (relevant[path] ?? 0) / Math.log2(rank + 2), 0);
    const ideal = grades
      .map(([, grade]) => grade)
      .sort((a, b) => b - a)
      .slice(0, k)
      .reduce((sum, grade, rank) => sum + grade / Math.log2(rank + 2), 0);
    ndcg += dcg / ideal;
    if (answering.some((path) => !got.includes(path))) missed.push({ query, got });
  }
  const n = queries.length;
  return { recallAtK: recall / n, recallOfAnswersAtK: answers / n, mrr: reciprocal / n, ndcgAtK: ndcg / n, missed };
}
