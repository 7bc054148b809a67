import { checkWorkspacePath } from "../files/workspace-path.js";
import { chunkText } from "./chunking.js";
import type { Embedder } from "./embeddings.js";
import type { ChunkHit, DocumentInfo, MemoryDocument, MemoryStore, StoredChunk } from "./memory-store.js";
import { fuseByRank } from "./rank-fusion.js";

/**
 * One namespace's memory: documents by path, kept searchable. What the memory tools call; the
 * engine gives each call the space of its run's namespace, so a tool never names a namespace.
 *
 * Invariants:
 * - Every write re-chunks the whole document (`chunkText`) and, with an embedder, embeds every
 *   chunk, then stores document and chunks together (`MemoryStore.put`). An append that races
 *   another write reads again and retries, so no append is lost.
 * - A document whose embedding failed is stored all the same, for full-text search, and the
 *   write says so; search never pretends to have vectors it does not have.
 * - Search merges full-text (BM25) and vector hits by reciprocal rank fusion when there is an
 *   embedder, else ranks by BM25 alone; it returns at most one hit (the best chunk) per document.
 */

export type SearchMode = "hybrid" | "full_text";

export type SearchHit = {
  readonly path: string;
  readonly chunk: number;
  readonly score: number;
  /** A passage of the chunk around the first word of the query it contains. */
  readonly excerpt: string;
};

export type SpaceFailure = { readonly ok: false; readonly code: "refused" | "not_found" | "conflict" | "too_large"; readonly message: string };

/** Chunks each list contributes to a fused ranking. */
const CANDIDATES = 50;
/** Characters of a chunk a hit shows. */
export const EXCERPT_CHARS = 700;
/** Largest document: memory is notes, not a data store. */
export const MAX_DOCUMENT_CHARS = 1_000_000;
/** Times a write tries before giving up on racing writers: a run has at most 16 calls in flight, so 16 appends to one document all land. */
const WRITE_ATTEMPTS = 32;

export class MemorySpace {
  readonly #store: MemoryStore;
  readonly #namespace: string;
  readonly #embedder: Embedder | undefined;

  constructor(store: MemoryStore, namespace: string, embedder?: Embedder) {
    this.#store = store;
    this.#namespace = namespace;
    this.#embedder = embedder;
  }

  /** Whether search compares meanings too (an embedder is configured). */
  get mode(): SearchMode {
    return this.#embedder === undefined ? "full_text" : "hybrid";
  }

  async write(
    path: string,
    content: string,
    append: boolean,
    at: number,
    signal: AbortSignal,
  ): Promise<
    | { readonly ok: true; readonly path: string; readonly version: number; readonly chunks: number; readonly embedded: boolean; readonly note?: string }
    | SpaceFailure
  > {
    const checked = checkPath(path);
    if (!checked.ok) return checked;
    for (let attempt = 1; ; attempt++) {
      const current = await this.#store.get(this.#namespace, checked.path);
      const text = append && current !== undefined ? joinAppended(current.content, content) : content;
      if (text.length > MAX_DOCUMENT_CHARS) {
        return {
          ok: false,
          code: "too_large",
          message: `${checked.path} would be ${text.length} characters; a memory document holds at most ${MAX_DOCUMENT_CHARS}. Split it into several documents.`,
        };
      }
      const { chunks, problem } = await this.#chunks(text, signal);
      const embedded = this.#embedder !== undefined && problem === undefined;
      const put = await this.#store.put(this.#namespace, {
        path: checked.path,
        content: text,
        chunks,
        ...(embedded ? { embeddingModel: this.#embedder.model } : {}),
        at,
        expectedVersion: current?.version ?? 0,
      });
      if (put.ok) {
        const note =
          problem === undefined ? undefined : `It was not embedded (${problem}); full-text search finds it, similarity search will once it is written again.`;
        return { ok: true, path: checked.path, version: put.version, chunks: chunks.length, embedded, ...(note === undefined ? {} : { note }) };
      }
      if (attempt >= WRITE_ATTEMPTS) {
        return { ok: false, code: "conflict", message: `${checked.path} kept changing while it was written (${attempt} attempts); write it again.` };
      }
    }
  }

  async read(path: string): Promise<MemoryDocument | SpaceFailure> {
    const checked = checkPath(path);
    if (!checked.ok) return checked;
    const document = await this.#store.get(this.#namespace, checked.path);
    return (
      document ?? {
        ok: false,
        code: "not_found",
        message: `There is no memory document ${checked.path}. memory.tree lists them; memory.search finds them by content.`,
      }
    );
  }

  /** Documents under the folder `prefix` ("" for all), sorted by path, at most `limit`. */
  async list(prefix: string, limit: number): Promise<readonly DocumentInfo[] | SpaceFailure> {
    if (prefix !== "") {
      const checked = checkPath(prefix);
      if (!checked.ok) return checked;
      return this.#store.list(this.#namespace, `${checked.path}/`, limit);
    }
    return this.#store.list(this.#namespace, "", limit);
  }

  async search(
    query: string,
    limit: number,
    signal: AbortSignal,
  ): Promise<{ readonly hits: readonly SearchHit[]; readonly mode: SearchMode; readonly note?: string }> {
    const terms = queryTerms(query);
    const text = await this.#store.searchText(this.#namespace, terms, CANDIDATES);
    let note: string | undefined;
    let ranked: readonly ChunkHit[] = text;
    if (this.#embedder !== undefined) {
      const embedded = await this.#embedder.embed([query], signal);
      if (embedded.ok && embedded.vectors[0] !== undefined) {
        const similar = await this.#store.searchVector(this.#namespace, this.#embedder.model, embedded.vectors[0], CANDIDATES);
        ranked = fuseByRank([text, similar], (hit) => `${hit.chunk}:${hit.path}`).map(({ item, score }) => ({ ...item, score }));
      } else if (!embedded.ok) note = `Only full-text search ran: the query could not be embedded (${embedded.problem}).`;
    }
    const hits: SearchHit[] = [];
    const seen = new Set<string>();
    for (const hit of ranked) {
      if (seen.has(hit.path)) continue;
      seen.add(hit.path);
      hits.push({ path: hit.path, chunk: hit.chunk, score: hit.score, excerpt: excerpt(hit.text, terms) });
      if (hits.length >= limit) break;
    }
    return { hits, mode: note === undefined ? this.mode : "full_text", ...(note === undefined ? {} : { note }) };
  }

  async #chunks(text: string, signal: AbortSignal): Promise<{ readonly chunks: readonly StoredChunk[]; readonly problem?: string }> {
    const texts = chunkText(text);
    if (this.#embedder === undefined || texts.length === 0) return { chunks: texts.map((chunk) => ({ text: chunk })) };
    const embedded = await this.#embedder.embed(texts, signal);
    if (!embedded.ok) return { chunks: texts.map((chunk) => ({ text: chunk })), problem: embedded.problem };
    return { chunks: texts.map((chunk, index) => ({ text: chunk, embedding: embedded.vectors[index]! })) };
  }
}

/** The words of a query, lower case, without English function words unless nothing else is left: what full-text search matches (the store stems them). */
export function queryTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const content = words.filter((word) => !STOP_WORDS.has(word));
  return content.length > 0 ? content : words;
}

/**
 * Words that carry no topic: with OR semantics every note containing "the" or "how" would match,
 * and their BM25 weight, though low, adds up over a question's many small words.
 */
const STOP_WORDS = new Set(
  (
    "a about after all also am an and any are as at be been before being but by can could did do does doing done for from had has have having he her here " +
    "him his how i if in into is it its itself just me more most my no not now of on once only or other our out over own same she should so some such than " +
    "that the their them then there these they this those through to too under until up very was we were what when where which while who whom why will with " +
    "would you your"
  ).split(" "),
);

function checkPath(path: string): { readonly ok: true; readonly path: string } | SpaceFailure {
  const checked = checkWorkspacePath(path);
  return checked.ok ? { ok: true, path: checked.relative } : { ok: false, code: "refused", message: checked.reason };
}

/** Appended text starts on a line of its own. */
function joinAppended(current: string, added: string): string {
  if (current === "" || current.endsWith("\n")) return current + added;
  return `${current}\n${added}`;
}

function excerpt(text: string, terms: readonly string[]): string {
  if (text.length <= EXCERPT_CHARS) return text;
  const lower = text.toLowerCase();
  const found = terms
    .map((term) => lower.indexOf(term.slice(0, Math.max(4, term.length - 2))))
    .filter((index) => index >= 0)
    .sort((a, b) => a - b)[0];
  let start = Math.max(0, (found ?? 0) - 150);
  if (start > 0) start = text.indexOf(" ", start) + 1 || start;
  const end = Math.min(text.length, start + EXCERPT_CHARS);
  return `${start > 0 ? "…" : ""}${text.slice(start, end).trim()}${end < text.length ? "…" : ""}`;
}
