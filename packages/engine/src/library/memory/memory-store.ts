/**
 * The memory sub-store: documents of a namespace's memory, their chunks, and the indexes that
 * search them. SQLite implements it (`sqlite-memory-store.ts`); PostgreSQL can, by passing the
 * contract suite (`test-support/memory-store-contract.ts`).
 *
 * Invariants every implementation keeps:
 * - Namespaces never meet: nothing written in one is read, listed or found from another.
 * - `put` replaces a document and all its chunks in one transaction, and only if the document's
 *   version is still `expectedVersion` (0: it does not exist); a writer that lost the race gets
 *   the current version and tries again — so two appends never lose one another.
 * - Searches rank best first and return at most `limit` chunks; `searchVector` compares only
 *   chunks embedded with the same model, by cosine similarity.
 */

export interface MemoryDocument {
  readonly path: string;
  readonly content: string;
  /** 1 for the first write, then 2, 3, … */
  readonly version: number;
  readonly updatedAt: number;
}

export interface StoredChunk {
  readonly text: string;
  /** Unit length; absent when the document was not embedded. */
  readonly embedding?: Float32Array;
}

export interface DocumentWrite {
  readonly path: string;
  readonly content: string;
  readonly chunks: readonly StoredChunk[];
  /** The model the chunks' embeddings come from (required when any chunk has one). */
  readonly embeddingModel?: string;
  readonly at: number;
  /** The version the writer read: 0 when the document did not exist. */
  readonly expectedVersion: number;
}

export type PutOutcome = { readonly ok: true; readonly version: number } | { readonly ok: false; readonly currentVersion: number };

export interface ChunkHit {
  readonly path: string;
  /** 0-based position of the chunk in its document. */
  readonly chunk: number;
  readonly text: string;
  /** Higher is better; comparable only within one search. */
  readonly score: number;
}

export interface DocumentInfo {
  readonly path: string;
  readonly sizeChars: number;
  readonly updatedAt: number;
}

export interface MemoryStore {
  get(namespace: string, path: string): Promise<MemoryDocument | undefined>;
  put(namespace: string, write: DocumentWrite): Promise<PutOutcome>;
  /** Documents whose path starts with `prefix` ("" for all), sorted by path. */
  list(namespace: string, prefix: string, limit: number): Promise<readonly DocumentInfo[]>;
  /** Chunks containing any of `terms` (plain words, lower case) in their text or their document's path, best first by BM25. */
  searchText(namespace: string, terms: readonly string[], limit: number): Promise<readonly ChunkHit[]>;
  /** Chunks embedded with `model`, most similar to `vector` (unit length) first. */
  searchVector(namespace: string, model: string, vector: Float32Array, limit: number): Promise<readonly ChunkHit[]>;
  /** Deletes every document of `namespace` with its chunks and its index, in one transaction (an end user's erasure); resolves with how many documents. */
  eraseNamespace(namespace: string): Promise<number>;
}
