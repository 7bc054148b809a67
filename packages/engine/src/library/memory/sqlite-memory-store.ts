import type Database from "better-sqlite3";
import type { ChunkHit, DocumentInfo, DocumentWrite, MemoryDocument, MemoryStore, PutOutcome } from "./memory-store.js";

/**
 * `MemoryStore` in SQLite: documents and chunks in tables, each chunk's text and its document's
 * path indexed by FTS5 (BM25 ranking, Porter stemming over Unicode words, diacritics folded; the
 * path because notes are named for what they are about: "people/sofia.md"), embeddings as
 * float32 blobs compared in process.
 *
 * Invariants:
 * - The FTS index is an external-content table kept equal to `memory_chunks` by triggers, inside
 *   the same transactions: a chunk is findable exactly while it exists.
 * - `put` runs as one IMMEDIATE transaction (the write lock is taken before the version is read),
 *   so two processes on one database file cannot both win the same version.
 * - The schema is created if absent (`MEMORY_SCHEMA`); when wired into the store it becomes one
 *   of the store's numbered migrations.
 *
 * BM25's statistics (how rare a word is) are over every namespace's chunks: ranking within a
 * namespace can shift with what other namespaces hold, though nothing of theirs is ever returned.
 */

export const MEMORY_SCHEMA = `
  CREATE TABLE IF NOT EXISTS memory_documents (
    namespace  TEXT NOT NULL,
    path       TEXT NOT NULL,
    content    TEXT NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, path)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS memory_chunks (
    id        INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    path      TEXT NOT NULL,
    idx       INTEGER NOT NULL,
    text      TEXT NOT NULL,
    model     TEXT,
    embedding BLOB,
    UNIQUE (namespace, path, idx)
  );
  CREATE INDEX IF NOT EXISTS memory_chunks_by_model ON memory_chunks (namespace, model);
  CREATE VIRTUAL TABLE IF NOT EXISTS memory_chunks_fts USING fts5(
    path, text, content = 'memory_chunks', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER IF NOT EXISTS memory_chunks_ai AFTER INSERT ON memory_chunks BEGIN
    INSERT INTO memory_chunks_fts (rowid, path, text) VALUES (new.id, new.path, new.text);
  END;
  CREATE TRIGGER IF NOT EXISTS memory_chunks_ad AFTER DELETE ON memory_chunks BEGIN
    INSERT INTO memory_chunks_fts (memory_chunks_fts, rowid, path, text) VALUES ('delete', old.id, old.path, old.text);
  END;
  CREATE TRIGGER IF NOT EXISTS memory_chunks_au AFTER UPDATE ON memory_chunks BEGIN
    INSERT INTO memory_chunks_fts (memory_chunks_fts, rowid, path, text) VALUES ('delete', old.id, old.path, old.text);
    INSERT INTO memory_chunks_fts (rowid, path, text) VALUES (new.id, new.path, new.text);
  END;
`;

/** Terms of one full-text query at most: a long question is mostly filler past this. */
const MAX_TERMS = 32;

interface DocumentRow {
  readonly path: string;
  readonly content: string;
  readonly version: number;
  readonly updated_at: number;
}

interface HitRow {
  readonly path: string;
  readonly idx: number;
  readonly text: string;
  readonly score: number;
}

interface EmbeddedRow {
  readonly path: string;
  readonly idx: number;
  readonly text: string;
  readonly embedding: Buffer;
}

export class SqliteMemoryStore implements MemoryStore {
  readonly #sql;
  readonly #put: Database.Transaction<(namespace: string, write: DocumentWrite) => PutOutcome>;

  /** Uses `db` (opened by the caller, WAL and a busy timeout set), creating the tables if absent. */
  constructor(db: Database.Database) {
    db.exec(MEMORY_SCHEMA);
    this.#sql = {
      get: db.prepare<[string, string], DocumentRow>("SELECT path, content, version, updated_at FROM memory_documents WHERE namespace = ? AND path = ?"),
      version: db.prepare<[string, string], { version: number }>("SELECT version FROM memory_documents WHERE namespace = ? AND path = ?"),
      upsert: db.prepare<[string, string, string, number, number]>(
        `INSERT INTO memory_documents (namespace, path, content, version, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (namespace, path) DO UPDATE SET content = excluded.content, version = excluded.version, updated_at = excluded.updated_at`,
      ),
      deleteChunks: db.prepare<[string, string]>("DELETE FROM memory_chunks WHERE namespace = ? AND path = ?"),
      insertChunk: db.prepare<[string, string, number, string, string | null, Buffer | null]>(
        "INSERT INTO memory_chunks (namespace, path, idx, text, model, embedding) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      list: db.prepare<[string, string, string, number], DocumentRow>(
        `SELECT path, content, version, updated_at FROM memory_documents
         WHERE namespace = ? AND substr(path, 1, length(?)) = ? ORDER BY path LIMIT ?`,
      ),
      searchText: db.prepare<[string, string, number], HitRow>(
        `SELECT c.path, c.idx, c.text, -bm25(memory_chunks_fts) AS score
         FROM memory_chunks_fts JOIN memory_chunks c ON c.id = memory_chunks_fts.rowid
         WHERE memory_chunks_fts MATCH ? AND c.namespace = ? ORDER BY bm25(memory_chunks_fts) LIMIT ?`,
      ),
      embedded: db.prepare<[string, string], EmbeddedRow>(
        "SELECT path, idx, text, embedding FROM memory_chunks WHERE namespace = ? AND model = ? AND embedding IS NOT NULL",
      ),
    };
    this.#put = db.transaction((namespace: string, write: DocumentWrite): PutOutcome => {
      const current = this.#sql.version.get(namespace, write.path)?.version ?? 0;
      if (current !== write.expectedVersion) return { ok: false, currentVersion: current };
      const version = current + 1;
      this.#sql.upsert.run(namespace, write.path, write.content, version, write.at);
      this.#sql.deleteChunks.run(namespace, write.path);
      write.chunks.forEach((chunk, index) => {
        const embedding = chunk.embedding === undefined ? null : Buffer.from(chunk.embedding.buffer, chunk.embedding.byteOffset, chunk.embedding.byteLength);
        this.#sql.insertChunk.run(namespace, write.path, index, chunk.text, embedding === null ? null : (write.embeddingModel ?? null), embedding);
      });
      return { ok: true, version };
    });
  }

  get(namespace: string, path: string): Promise<MemoryDocument | undefined> {
    const row = this.#sql.get.get(namespace, path);
    return Promise.resolve(row === undefined ? undefined : { path: row.path, content: row.content, version: row.version, updatedAt: row.updated_at });
  }

  put(namespace: string, write: DocumentWrite): Promise<PutOutcome> {
    return Promise.resolve(this.#put.immediate(namespace, write));
  }

  list(namespace: string, prefix: string, limit: number): Promise<readonly DocumentInfo[]> {
    const rows = this.#sql.list.all(namespace, prefix, prefix, limit);
    return Promise.resolve(rows.map((row) => ({ path: row.path, sizeChars: row.content.length, updatedAt: row.updated_at })));
  }

  searchText(namespace: string, terms: readonly string[], limit: number): Promise<readonly ChunkHit[]> {
    const query = [...new Set(terms)]
      .slice(0, MAX_TERMS)
      .map((term) => `"${term.replaceAll('"', '""')}"`)
      .join(" OR ");
    if (query === "") return Promise.resolve([]);
    const rows = this.#sql.searchText.all(query, namespace, limit);
    return Promise.resolve(rows.map((row) => ({ path: row.path, chunk: row.idx, text: row.text, score: row.score })));
  }

  searchVector(namespace: string, model: string, vector: Float32Array, limit: number): Promise<readonly ChunkHit[]> {
    const hits: ChunkHit[] = [];
    for (const row of this.#sql.embedded.iterate(namespace, model)) {
      // Copied: a blob's bytes may sit at an offset a Float32Array cannot start at.
      const stored = new Float32Array(row.embedding.byteLength / 4);
      new Uint8Array(stored.buffer).set(row.embedding);
      if (stored.length !== vector.length) continue;
      hits.push({ path: row.path, chunk: row.idx, text: row.text, score: dot(stored, vector) });
    }
    hits.sort((a, b) => b.score - a.score);
    return Promise.resolve(hits.slice(0, limit));
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
