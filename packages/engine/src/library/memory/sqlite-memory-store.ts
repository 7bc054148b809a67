import type Database from "better-sqlite3";
import { sha256Hex } from "../../util/ids.js";
import type { ChunkHit, DocumentInfo, DocumentWrite, MemoryDocument, MemoryStore, PutOutcome } from "./memory-store.js";

/**
 * `MemoryStore` in SQLite: documents and chunks in tables, each chunk's text and its document's
 * path indexed by FTS5 (BM25 ranking, Porter stemming over Unicode words, diacritics folded; the
 * path because notes are named for what they are about: "people/sofia.md"), embeddings as
 * float32 blobs compared in process.
 *
 * Invariants:
 * - Each namespace has a full-text index of its own (`memory_fts_<hash of the namespace>`, listed
 *   in `memory_spaces`): BM25's statistics (how many chunks there are, how long they are, how many
 *   hold a word) are those of the namespace's chunks only, so one end user's scores and order do
 *   not move with what another writes — a shared index was an oracle for their words (issue 23).
 *   The cost: one FTS5 table (and its shadow tables) per namespace that wrote memory.
 * - An index is an external-content table over `memory_chunks`, kept equal to the namespace's
 *   chunks by `put` inside its transaction: a chunk is findable exactly while it exists.
 * - `put` runs as one IMMEDIATE transaction (the write lock is taken before the version is read),
 *   so two processes on one database file cannot both win the same version.
 * - The schema is versioned by `PRAGMA user_version` (`MEMORY_SCHEMA_VERSION`) and brought up to
 *   date when a store opens, in one IMMEDIATE transaction: version 1 moved the one shared index
 *   (with its triggers) into an index per namespace, rebuilt from the chunks.
 */

/** The schema version this code writes (`PRAGMA user_version` of the memory database). */
export const MEMORY_SCHEMA_VERSION = 1;

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
  CREATE TABLE IF NOT EXISTS memory_spaces (
    namespace TEXT PRIMARY KEY,
    fts       TEXT NOT NULL UNIQUE
  ) WITHOUT ROWID;
`;

/** What version 0 had: one index for every namespace, kept by triggers. */
const SHARED_INDEX = `
  DROP TRIGGER IF EXISTS memory_chunks_ai;
  DROP TRIGGER IF EXISTS memory_chunks_ad;
  DROP TRIGGER IF EXISTS memory_chunks_au;
  DROP TABLE IF EXISTS memory_chunks_fts;
`;

/** The index table of `namespace`: a hash, so any namespace makes a plain identifier and two never share one. */
export function memoryIndexTable(namespace: string): string {
  return `memory_fts_${sha256Hex(`tapedeck memory index v1\n${namespace}`).slice(0, 32)}`;
}

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

interface ChunkRow {
  readonly id: number;
  readonly path: string;
  readonly text: string;
}

/** The statements over one namespace's index. */
interface IndexStatements {
  readonly add: Database.Statement<[number, string, string]>;
  readonly remove: Database.Statement<[number, string, string]>;
  readonly search: Database.Statement<[string, string, number], HitRow>;
}

export class SqliteMemoryStore implements MemoryStore {
  readonly #db: Database.Database;
  readonly #sql;
  readonly #indexes = new Map<string, IndexStatements>();
  readonly #put: Database.Transaction<(namespace: string, write: DocumentWrite) => PutOutcome>;

  /** Uses `db` (opened by the caller, WAL and a busy timeout set), creating the tables if absent and bringing an older schema up to date. */
  constructor(db: Database.Database) {
    this.#db = db;
    db.transaction(() => migrate(db)).immediate();
    this.#sql = {
      get: db.prepare<[string, string], DocumentRow>("SELECT path, content, version, updated_at FROM memory_documents WHERE namespace = ? AND path = ?"),
      version: db.prepare<[string, string], { version: number }>("SELECT version FROM memory_documents WHERE namespace = ? AND path = ?"),
      upsert: db.prepare<[string, string, string, number, number]>(
        `INSERT INTO memory_documents (namespace, path, content, version, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (namespace, path) DO UPDATE SET content = excluded.content, version = excluded.version, updated_at = excluded.updated_at`,
      ),
      chunksOf: db.prepare<[string, string], ChunkRow>("SELECT id, path, text FROM memory_chunks WHERE namespace = ? AND path = ?"),
      deleteChunks: db.prepare<[string, string]>("DELETE FROM memory_chunks WHERE namespace = ? AND path = ?"),
      insertChunk: db.prepare<[string, string, number, string, string | null, Buffer | null]>(
        "INSERT INTO memory_chunks (namespace, path, idx, text, model, embedding) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      space: db.prepare<[string], { fts: string }>("SELECT fts FROM memory_spaces WHERE namespace = ?"),
      deleteDocuments: db.prepare<[string]>("DELETE FROM memory_documents WHERE namespace = ?"),
      deleteAllChunks: db.prepare<[string]>("DELETE FROM memory_chunks WHERE namespace = ?"),
      deleteSpace: db.prepare<[string]>("DELETE FROM memory_spaces WHERE namespace = ?"),
      list: db.prepare<[string, string, string, number], DocumentRow>(
        `SELECT path, content, version, updated_at FROM memory_documents
         WHERE namespace = ? AND substr(path, 1, length(?)) = ? ORDER BY path LIMIT ?`,
      ),
      embedded: db.prepare<[string, string], EmbeddedRow>(
        "SELECT path, idx, text, embedding FROM memory_chunks WHERE namespace = ? AND model = ? AND embedding IS NOT NULL",
      ),
    };
    this.#put = db.transaction((namespace: string, write: DocumentWrite): PutOutcome => {
      const current = this.#sql.version.get(namespace, write.path)?.version ?? 0;
      if (current !== write.expectedVersion) return { ok: false, currentVersion: current };
      const version = current + 1;
      const index = this.#index(namespace, true)!;
      this.#sql.upsert.run(namespace, write.path, write.content, version, write.at);
      // An external-content index forgets a row only when told what it held.
      for (const old of this.#sql.chunksOf.all(namespace, write.path)) index.remove.run(old.id, old.path, old.text);
      this.#sql.deleteChunks.run(namespace, write.path);
      write.chunks.forEach((chunk, position) => {
        const embedding = chunk.embedding === undefined ? null : Buffer.from(chunk.embedding.buffer, chunk.embedding.byteOffset, chunk.embedding.byteLength);
        const inserted = this.#sql.insertChunk.run(
          namespace,
          write.path,
          position,
          chunk.text,
          embedding === null ? null : (write.embeddingModel ?? null),
          embedding,
        );
        index.add.run(Number(inserted.lastInsertRowid), write.path, chunk.text);
      });
      return { ok: true, version };
    });
  }

  get(namespace: string, path: string): Promise<MemoryDocument | undefined> {
    const row = this.#sql.get.get(namespace, path);
    return Promise.resolve(row === undefined ? undefined : { path: row.path, content: row.content, version: row.version, updatedAt: row.updated_at });
  }

  put(namespace: string, write: DocumentWrite): Promise<PutOutcome> {
    try {
      return Promise.resolve(this.#put.immediate(namespace, write));
    } catch (error) {
      // The index this write made may have been rolled back with it.
      this.#indexes.delete(namespace);
      throw error;
    }
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
    const index = this.#index(namespace, false);
    if (index === undefined) return Promise.resolve([]);
    const rows = index.search.all(query, namespace, limit);
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

  eraseNamespace(namespace: string): Promise<number> {
    const erase = this.#db.transaction((): number => {
      const documents = this.#sql.deleteDocuments.run(namespace).changes;
      this.#sql.deleteAllChunks.run(namespace);
      const table = this.#sql.space.get(namespace)?.fts;
      // The index goes whole (its shadow tables too): its terms and statistics are the namespace's words.
      if (table !== undefined) this.#db.exec(`DROP TABLE IF EXISTS ${table}`);
      this.#sql.deleteSpace.run(namespace);
      return documents;
    });
    this.#indexes.delete(namespace);
    return Promise.resolve(erase.immediate());
  }

  /** The statements over `namespace`'s index; with `create`, the index is made if it has none (inside the caller's transaction), else undefined. */
  #index(namespace: string, create: boolean): IndexStatements | undefined {
    const known = this.#indexes.get(namespace);
    if (known !== undefined) return known;
    let table = this.#sql.space.get(namespace)?.fts;
    if (table === undefined) {
      if (!create) return undefined;
      table = createIndex(this.#db, namespace);
    }
    const statements: IndexStatements = {
      add: this.#db.prepare(`INSERT INTO ${table} (rowid, path, text) VALUES (?, ?, ?)`),
      remove: this.#db.prepare(`INSERT INTO ${table} (${table}, rowid, path, text) VALUES ('delete', ?, ?, ?)`),
      search: this.#db.prepare(
        `SELECT c.path, c.idx, c.text, -bm25(${table}) AS score
         FROM ${table} JOIN memory_chunks c ON c.id = ${table}.rowid
         WHERE ${table} MATCH ? AND c.namespace = ? ORDER BY bm25(${table}) LIMIT ?`,
      ),
    };
    this.#indexes.set(namespace, statements);
    return statements;
  }
}

/** Makes `namespace`'s index (empty) and lists it; answers its table's name. */
function createIndex(db: Database.Database, namespace: string): string {
  const table = memoryIndexTable(namespace);
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(
       path, text, content = 'memory_chunks', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
     )`,
  );
  db.prepare("INSERT INTO memory_spaces (namespace, fts) VALUES (?, ?) ON CONFLICT (namespace) DO NOTHING").run(namespace, table);
  return table;
}

/** Brings the database to `MEMORY_SCHEMA_VERSION` (inside an IMMEDIATE transaction, so one process migrates and the others see it done). */
function migrate(db: Database.Database): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > MEMORY_SCHEMA_VERSION) {
    throw new Error(
      `The memory database is at schema version ${version}, newer than this Tapedeck knows (${MEMORY_SCHEMA_VERSION}): upgrade Tapedeck to open it.`,
    );
  }
  db.exec(MEMORY_SCHEMA);
  if (version === MEMORY_SCHEMA_VERSION) return;
  // Version 0: one shared index (or a new file). Each namespace's chunks go into an index of their own.
  db.exec(SHARED_INDEX);
  const namespaces = db.prepare<[], { namespace: string }>("SELECT DISTINCT namespace FROM memory_chunks").all();
  for (const { namespace } of namespaces) {
    const table = createIndex(db, namespace);
    db.prepare(`INSERT INTO ${table} (rowid, path, text) SELECT id, path, text FROM memory_chunks WHERE namespace = ?`).run(namespace);
  }
  db.pragma(`user_version = ${MEMORY_SCHEMA_VERSION}`);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
