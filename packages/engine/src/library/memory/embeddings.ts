/**
 * Embeddings for memory search: a function from texts to vectors, and one that asks an
 * OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure OpenAI, Ollama, vLLM, LiteLLM, …).
 * The engine passes a fetch that injects the endpoint's credential from the vault, so no key is
 * ever seen here. Without an embedder, memory search is full-text only — there is no fallback
 * that makes vectors up.
 *
 * Invariants:
 * - An embedder answers one unit-length vector per text, in order, or says why it cannot; it
 *   never throws for a failing endpoint (a bad status, a malformed answer, a timeout).
 * - Requests carry at most `batchSize` texts; every vector of one model has the same length.
 */

export type EmbedOutcome = { readonly ok: true; readonly vectors: readonly Float32Array[] } | { readonly ok: false; readonly problem: string };

export interface Embedder {
  /** Names the vector space: vectors of different models are never compared. */
  readonly model: string;
  embed(texts: readonly string[], signal: AbortSignal): Promise<EmbedOutcome>;
}

/** The part of `fetch` the embedder uses (the global `fetch` fits, and so does one that injects a credential). */
export type EmbeddingsFetch = (
  url: string,
  init: { readonly method: "POST"; readonly headers: Record<string, string>; readonly body: string; readonly signal: AbortSignal },
) => Promise<{ readonly status: number; text(): Promise<string> }>;

export interface OpenAiEmbedderOptions {
  /** The API's base URL, e.g. `https://api.openai.com/v1`; requests go to `${baseUrl}/embeddings`. */
  readonly baseUrl: string;
  readonly model: string;
  readonly fetch: EmbeddingsFetch;
  /** Asked of models that can shorten their vectors (OpenAI's text-embedding-3-*). */
  readonly dimensions?: number;
  /** Texts per request. Default 64. */
  readonly batchSize?: number;
}

/** An embedder that asks an OpenAI-compatible endpoint. */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`;
  const batchSize = options.batchSize ?? 64;
  const embedBatch = async (texts: readonly string[], signal: AbortSignal): Promise<EmbedOutcome> => {
    const body = JSON.stringify({ model: options.model, input: texts, ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }) });
    let status: number;
    let text: string;
    try {
      const response = await options.fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal });
      status = response.status;
      text = await response.text();
    } catch (error) {
      return { ok: false, problem: `the embeddings endpoint ${url} could not be reached (${(error as Error).message})` };
    }
    if (status < 200 || status > 299) return { ok: false, problem: `the embeddings endpoint ${url} answered ${status}: ${text.slice(0, 200)}` };
    return vectorsOf(text, texts.length, url);
  };
  return {
    model: options.model,
    async embed(texts, signal) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = await embedBatch(texts.slice(start, start + batchSize), signal);
        if (!batch.ok) return batch;
        vectors.push(...batch.vectors);
      }
      if (vectors.some((vector) => vector.length !== vectors[0]?.length))
        return { ok: false, problem: `the embeddings endpoint ${url} answered vectors of different lengths` };
      return { ok: true, vectors };
    },
  };
}

/** The vectors of an answer `{ data: [{ index, embedding: number[] }] }`, in input order, unit length. */
function vectorsOf(text: string, count: number, url: string): EmbedOutcome {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { ok: false, problem: `the embeddings endpoint ${url} answered something that is not JSON` };
  }
  const data = (answer as { data?: unknown }).data;
  if (!Array.isArray(data) || data.length !== count)
    return { ok: false, problem: `the embeddings endpoint ${url} answered ${Array.isArray(data) ? data.length : "no"} vectors for ${count} texts` };
  const vectors: (Float32Array | undefined)[] = new Array<Float32Array | undefined>(count);
  for (const [position, item] of (data as unknown[]).entries()) {
    const { index = position, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined) {
      return { ok: false, problem: `the embeddings endpoint ${url} answered a vector with a wrong index (${String(index)})` };
    }
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === "number" && Number.isFinite(x))) {
      return { ok: false, problem: `the embeddings endpoint ${url} answered an embedding that is not a list of numbers` };
    }
    vectors[index] = unit(Float32Array.from(embedding as number[]));
  }
  return { ok: true, vectors: vectors as Float32Array[] };
}

/** `vector` scaled to length 1 (a zero vector stays zero: it is similar to nothing). */
export function unit(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const length = Math.sqrt(sum);
  return length === 0 ? vector : vector.map((x) => x / length);
}
