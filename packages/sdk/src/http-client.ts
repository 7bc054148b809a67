import type { ApiErrorBody } from "@tapedeck/protocol/api";
import { TapedeckError } from "./errors.js";

/** The `fetch` the client uses: the platform's, or one you pass (a test double, a proxy agent). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | number | readonly string[] | undefined>>;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

/**
 * One HTTP exchange with the server: JSON in, JSON out, errors as `TapedeckError`. Uses
 * nothing but `fetch`, `URL` and `JSON`, so it runs in Node, browsers and edge runtimes.
 */
export class HttpClient {
  readonly #baseUrl: string;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #fetch: Fetch;

  constructor(baseUrl: string, headers: Readonly<Record<string, string>>, fetchImpl: Fetch) {
    this.#baseUrl = baseUrl.replace(/\/+$/, "");
    this.#headers = headers;
    this.#fetch = fetchImpl;
  }

  /** The same server and fetch, with more headers. */
  with(headers: Readonly<Record<string, string>>): HttpClient {
    return new HttpClient(this.#baseUrl, { ...this.#headers, ...headers }, this.#fetch);
  }

  async request<T>(method: "GET" | "POST" | "DELETE", path: string, options: RequestOptions = {}): Promise<T> {
    const url = this.#baseUrl + path + queryString(options.query);
    const headers: Record<string, string> = { accept: "application/json", ...this.#headers };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new TapedeckError(0, "unreachable", `Cannot reach Tapedeck at ${this.#baseUrl}: ${networkReason(error)}`, { cause: error });
    }
    const text = await response.text();
    const body = parseJson(text);
    if (response.ok) {
      if (body === undefined)
        throw new TapedeckError(
          response.status,
          "bad_response",
          `${method} ${path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
        );
      return body as T;
    }
    throw errorOf(response.status, body, text, response.headers.get("retry-after"));
  }

  /**
   * Opens a stream of Server-Sent Events (`GET`): resolves with its body once the server
   * answered 200; an error answer rejects as `request` does, an unreachable server with
   * `unreachable`.
   */
  async stream(path: string, options: RequestOptions & { readonly lastEventId?: string } = {}): Promise<ReadableStream<Uint8Array>> {
    const url = this.#baseUrl + path + queryString(options.query);
    const headers: Record<string, string> = { accept: "text/event-stream", ...this.#headers };
    if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
    let response: Response;
    try {
      response = await this.#fetch(url, { method: "GET", headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new TapedeckError(0, "unreachable", `Cannot reach Tapedeck at ${this.#baseUrl}: ${networkReason(error)}`, { cause: error });
    }
    if (response.ok && response.body !== null) return response.body;
    const text = await response.text();
    throw errorOf(response.status, parseJson(text), text);
  }
}

/** Why `fetch` threw, with its cause: Node's says only "fetch failed", and its cause says "connect ECONNREFUSED …". */
function networkReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause === undefined || cause === "" || message.includes(cause) ? message : `${message} (${cause})`;
}

function errorOf(status: number, body: unknown, text: string, retryAfter: string | null = null): TapedeckError {
  if (isErrorBody(body)) {
    const { code, message, diagnostics } = body.error;
    // The body's seconds, else the header's (a proxy's 429 may carry only the header).
    const seconds = body.error.retryAfterSeconds ?? (retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined);
    return new TapedeckError(status, code, message, {
      ...(diagnostics === undefined ? {} : { diagnostics }),
      ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }),
    });
  }
  return new TapedeckError(status, "bad_response", `HTTP ${status} without a Tapedeck error body: ${text.slice(0, 200)}`);
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== "object" || body === null) return false;
  const error = (body as { error?: unknown }).error;
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function queryString(query: RequestOptions["query"]): string {
  if (query === undefined) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value as readonly string[]) params.append(key, item);
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
