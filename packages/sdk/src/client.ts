import { runChanges, type RunChange, type RunChangesOptions } from "./resources/run-changes.js";
import {
  NAMESPACE_HEADER,
  namespaceError,
  type CheckRequest,
  type CheckResult,
  type Diagnostic,
  type TestReport,
  type TestRequest,
} from "@tapedeck/protocol/api";
import { createAgentTools, type AgentTools } from "./agent/agent-tools-api.js";
import type { AgentToolsOptions } from "./agent/agent-tools.js";
import { bindDirectTools, type DirectTools, type DirectToolsOptions } from "./direct/direct-tools.js";
import { loadEmbedded, type EmbeddedOptions, type EmbeddedTapedeck } from "./embedded.js";
import { TapedeckError } from "./errors.js";
import { HttpClient, type Fetch } from "./http-client.js";
import { Approvals } from "./resources/approvals.js";
import { Credentials } from "./resources/credentials.js";
import { Runs } from "./resources/runs.js";
import { Schedules } from "./resources/schedules.js";
import { Tasks } from "./resources/tasks.js";
import { Tokens } from "./resources/tokens.js";
import { Namespaces } from "./resources/namespaces.js";
import { Toolsets } from "./resources/toolsets.js";
import { Webhooks } from "./resources/webhooks.js";
import { Worker } from "./worker/worker.js";
import type { WorkerOptions } from "./worker/worker-types.js";

/** End users' tokens start with this (API keys with `tdk_`). */
const END_USER_TOKEN_PREFIX = "tdt_";
/** Where `tapedeck serve` listens by default. */
const DEFAULT_BASE_URL = "http://127.0.0.1:7700";

export interface TapedeckOptions {
  /** The server, such as `http://127.0.0.1:7700` (what `tapedeck serve` prints). Default: the `TAPEDECK_URL` environment variable, else `http://127.0.0.1:7700`. */
  readonly baseUrl?: string;
  /** An API key (`tdk_…`), or an end user's token (`tdt_…`, from `tokens.create`). Default: the `TAPEDECK_API_KEY` environment variable. */
  readonly apiKey?: string;
  /**
   * Act for this end user: every request is limited to the runs of this namespace, and runs
   * started get it. Default: none (the key's own scope). See `namespace()`.
   */
  readonly namespace?: string;
  /** Default: the platform's `fetch`. */
  readonly fetch?: Fetch;
}

/** What testing a script gives: what the test run did, or the type-checker's refusal. */
export type TestResult =
  /** The script did not type-check: nothing was run. */
  | { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] }
  /** The script ran against the scenario; `status` says how it ended. */
  | ({ readonly kind: "tested" } & TestReport);

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
  readonly namespaces: Namespaces;
  readonly webhooks: Webhooks;
  readonly credentials: Credentials;
  readonly schedules: Schedules;
  readonly #options: TapedeckOptions & { readonly baseUrl: string; readonly apiKey: string };
  readonly #http: HttpClient;
  /** A client of another node of the same store, with this client's key, namespace and fetch (a worker's `nodes`). */
  readonly #httpAt: (baseUrl: string) => HttpClient;

  /** `new Tapedeck()` reads the server and the key from `TAPEDECK_URL` and `TAPEDECK_API_KEY`. */
  constructor(given: TapedeckOptions = {}) {
    const baseUrl = given.baseUrl ?? environment("TAPEDECK_URL") ?? DEFAULT_BASE_URL;
    const apiKey = given.apiKey ?? environment("TAPEDECK_API_KEY");
    if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) {
      throw new TypeError(`Tapedeck: baseUrl must be an http(s) URL such as "http://127.0.0.1:7700" (got ${JSON.stringify(baseUrl)}).`);
    }
    if (typeof apiKey !== "string" || apiKey === "") {
      throw new TypeError("Tapedeck: apiKey is required: an API key (tapedeck keys create) or an end user's token; pass it, or set TAPEDECK_API_KEY.");
    }
    const options = { ...given, baseUrl, apiKey };
    this.#options = options;
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}` };
    if (options.namespace !== undefined) {
      // Checked here: HTTP would drop spaces around the header's value, so "alice " would reach the server as "alice".
      const problem =
        typeof options.namespace === "string" ? namespaceError(options.namespace, "Tapedeck: namespace") : "Tapedeck: namespace must be a string.";
      if (problem !== undefined) throw new TypeError(problem);
      headers[NAMESPACE_HEADER] = options.namespace;
    }
    // Called through a closure: some runtimes refuse a `fetch` detached from its global.
    const fetchImpl: Fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#http = new HttpClient(options.baseUrl, headers, fetchImpl);
    this.#httpAt = (url) => new HttpClient(url, headers, fetchImpl);
    this.toolsets = new Toolsets(this.#http);
    this.runs = new Runs(this.#http);
    this.approvals = new Approvals(this.#http);
    this.tokens = new Tokens(this.#http);
    this.namespaces = new Namespaces(this.#http);
    this.webhooks = new Webhooks(this.#http);
    this.credentials = new Credentials(this.#http);
    this.schedules = new Schedules(this.#http);
  }

  /**
   * The live changes of the runs in this client's scope (`GET /v1/events`, Server-Sent Events):
   * each run created or changed (status, waits, output), as long as the caller iterates; it
   * resumes by itself after a dropped connection or a server restart. Over HTTP only: an
   * embedded client's iteration throws `invalid_request` at once.
   */
  events(options: RunChangesOptions = {}): AsyncIterable<RunChange> {
    return runChanges(this.#http, options);
  }

  /**
   * The same client over an engine in this process, without a server: no port, no network
   * (each call goes through the server's routes in memory, so answers and errors are the
   * server's). Needs `@tapedeck/server` installed; the SDK loads it only here.
   */
  static async embedded(options: EmbeddedOptions = {}): Promise<EmbeddedTapedeck> {
    const connection = await (await loadEmbedded()).openEmbedded(options);
    const client = new Tapedeck({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, fetch: connection.fetch });
    return Object.assign(client, { close: () => connection.close() });
  }

  /**
   * A client acting for one end user, with the same key: it sees only the runs of namespace
   * `userId`, and the runs it starts belong to it. The server enforces it: a key limited to
   * another namespace gets 403 `forbidden`. To hand an end user's code something it cannot
   * widen, mint a token instead (`tokens.create`) and build a client with it.
   */
  namespace(userId: string): Tapedeck {
    if (typeof userId !== "string" || userId === "") throw new TypeError("Tapedeck.namespace: the end user's id must be a non-empty string.");
    const problem = namespaceError(userId, "Tapedeck.namespace: the end user's id");
    if (problem !== undefined) throw new TypeError(problem);
    return new Tapedeck({ ...this.#options, namespace: userId });
  }

  /**
   * A worker serving host tools from this process: `tapedeck.worker({ tools: { shop: { price:
   * async (args, ctx) => … } } }).start()`. It takes the calls of runs in the client's scope
   * (a namespace client: that end user's runs only; with `toolset`: that toolset's runs only).
   */
  worker(options: WorkerOptions): Worker {
    const others = (options.nodes ?? []).filter((url) => url !== this.#options.baseUrl);
    for (const url of others)
      if (!/^https?:\/\//.test(url)) throw new TypeError(`worker: nodes must be http(s) URLs such as "http://127.0.0.1:7701" (got ${JSON.stringify(url)}).`);
    return new Worker([new Tasks(this.#http), ...others.map((url) => new Tasks(this.#httpAt(url)))], options);
  }

  /**
   * The agent tools (`run_script`, `get_run`, `retry_run`, …) for a model acting for this
   * client's end user, with adapters for the Anthropic and OpenAI APIs. Take them from
   * `namespace(userId)` or from a client holding an end user's token: the runs the model starts
   * belong to that user. Throws a `TypeError` for a key's client that names no namespace.
   */
  agentTools(options: AgentToolsOptions = {}): AgentTools {
    if (this.#options.namespace === undefined && !this.#options.apiKey.startsWith(END_USER_TOKEN_PREFIX)) {
      throw new TypeError(
        "Tapedeck.agentTools: the runs a model starts belong to an end user: call it on tapedeck.namespace(userId), or on a client holding that user's token.",
      );
    }
    return createAgentTools(this, options);
  }

  /**
   * A toolset's tools as model tools, each call journaled in the session `options.session` of
   * this client's namespace: `tools.anthropic.tools` / `tools.anthropic.handle(block)`,
   * `tools.openai.responses…`, `tools.openai…` (Chat Completions), `tools.definitions` /
   * `tools.handle(name, input, { toolCallId })`. Binding asks the server once (it pins the tool
   * table in the session); `tools.note` tells the model when its tools changed since the
   * session's previous binding. A bad option is a `TapedeckError` (`invalid_request`) naming the
   * path of every mistake.
   */
  directTools(options: DirectToolsOptions): Promise<DirectTools> {
    return bindDirectTools(this.#http, options);
  }

  /** Type-checks a script against a toolset's declarations, without running it. */
  check(request: CheckRequest): Promise<CheckResult> {
    return this.#http.request("POST", "/v1/check", { body: request });
  }

  /**
   * Runs a script against a scenario's mocks in virtual time (`test_script`): nothing is sent to
   * a tool and no run is kept. A script that does not type-check is `refused`, not thrown; a
   * scenario's `from_run` outside the client's scope is 404, as a missing run.
   */
  async test(request: TestRequest): Promise<TestResult> {
    try {
      return { kind: "tested", ...(await this.#http.request<TestReport>("POST", "/v1/test", { body: request })) };
    } catch (error) {
      if (TapedeckError.is(error) && error.code === "script_refused") return { kind: "refused", diagnostics: error.diagnostics ?? [] };
      throw error;
    }
  }
}

/** A variable of the process's environment, where there is one (Node, Deno, Bun); undefined elsewhere (a browser, an edge runtime). */
function environment(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === "" ? undefined : value;
}
