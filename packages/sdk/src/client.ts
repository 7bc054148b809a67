import { NAMESPACE_HEADER, type CheckRequest, type CheckResult } from "./api.js";
import { loadEmbedded, type EmbeddedOptions, type EmbeddedTapedeck } from "./embedded.js";
import { HttpClient, type Fetch } from "./http-client.js";
import { Approvals } from "./resources/approvals.js";
import { Credentials } from "./resources/credentials.js";
import { Runs } from "./resources/runs.js";
import { Tasks } from "./resources/tasks.js";
import { Tokens } from "./resources/tokens.js";
import { Toolsets } from "./resources/toolsets.js";
import { Webhooks } from "./resources/webhooks.js";
import { Worker } from "./worker/worker.js";
import type { WorkerOptions } from "./worker/worker-types.js";

export interface TapedeckOptions {
  /** The server, such as `http://127.0.0.1:7700` (what `tapedeck serve` prints). */
  readonly baseUrl: string;
  /** An API key (`tdk_…`), or an end user's token (`tdt_…`, from `tokens.create`). */
  readonly apiKey: string;
  /**
   * Act for this end user: every request is limited to the runs of this namespace, and runs
   * started get it. Default: none (the key's own scope). See `namespace()`.
   */
  readonly namespace?: string;
  /** Default: the platform's `fetch`. */
  readonly fetch?: Fetch;
}

/**
 * The client of a Tapedeck server. It holds no state but its options: make one per key (or
 * token) and share it.
 *
 * Errors: a call the server refuses throws a `TapedeckError` with the HTTP `status` and a
 * stable `code`; an unreachable server throws one with status 0 and code `unreachable`.
 * Expected outcomes are values, not errors: a script that does not type-check is
 * `{ kind: "refused" }`, and `check` answers `{ ok: false }`.
 */
export class Tapedeck {
  readonly toolsets: Toolsets;
  readonly runs: Runs;
  readonly approvals: Approvals;
  readonly tokens: Tokens;
  readonly webhooks: Webhooks;
  readonly credentials: Credentials;
  readonly #options: TapedeckOptions;
  readonly #http: HttpClient;

  constructor(options: TapedeckOptions) {
    if (typeof options.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(`Tapedeck: baseUrl must be an http(s) URL such as "http://127.0.0.1:7700" (got ${JSON.stringify(options.baseUrl)}).`);
    }
    if (typeof options.apiKey !== "string" || options.apiKey === "") {
      throw new TypeError("Tapedeck: apiKey is required: an API key (tapedeck keys create) or an end user's token.");
    }
    this.#options = options;
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}` };
    if (options.namespace !== undefined) headers[NAMESPACE_HEADER] = options.namespace;
    // Called through a closure: some runtimes refuse a `fetch` detached from its global.
    const fetchImpl: Fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#http = new HttpClient(options.baseUrl, headers, fetchImpl);
    this.toolsets = new Toolsets(this.#http);
    this.runs = new Runs(this.#http);
    this.approvals = new Approvals(this.#http);
    this.tokens = new Tokens(this.#http);
    this.webhooks = new Webhooks(this.#http);
    this.credentials = new Credentials(this.#http);
  }

  /**
   * The same client over an engine in this process, without a server: no port, no network
   * (each call goes through the server's routes in memory, so answers and errors are the
   * server's). Needs `@tapedeck/server` installed; the SDK loads it only here.
   */
  static async embedded(options: EmbeddedOptions = {}): Promise<EmbeddedTapedeck> {
    return (await loadEmbedded()).embedded(options);
  }

  /**
   * A client acting for one end user, with the same key: it sees only the runs of namespace
   * `userId`, and the runs it starts belong to it. The server enforces it: a key limited to
   * another namespace gets 403 `forbidden`. To hand an end user's code something it cannot
   * widen, mint a token instead (`tokens.create`) and build a client with it.
   */
  namespace(userId: string): Tapedeck {
    if (typeof userId !== "string" || userId === "") throw new TypeError("Tapedeck.namespace: the end user's id must be a non-empty string.");
    return new Tapedeck({ ...this.#options, namespace: userId });
  }

  /**
   * A worker serving host tools from this process: `tapedeck.worker({ tools: { shop: { price:
   * async (args, ctx) => … } } }).start()`. It takes the calls of runs in the client's scope
   * (a namespace client: that end user's runs only; with `toolset`: that toolset's runs only).
   */
  worker(options: WorkerOptions): Worker {
    return new Worker(new Tasks(this.#http), options);
  }

  /** Type-checks a script against a toolset's declarations, without running it. */
  check(request: CheckRequest): Promise<CheckResult> {
    return this.#http.request("POST", "/v1/check", { body: request });
  }
}
