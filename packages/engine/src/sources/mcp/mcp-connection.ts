import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type ElicitRequest,
  type ElicitResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpServerRecipe } from "@tapedeck/protocol";
import { assertOneAuthorization, bearerFetch, McpUnauthorizedError, vaultFetch, type McpBearerAuth } from "./mcp-bearer-auth.js";
import type { McpCallResult } from "./mcp-result.js";
import { expandReferences } from "./mcp-recipe.js";

/**
 * One MCP server, reached through the official SDK client.
 *
 * Invariants:
 * - Lazy: nothing connects until the first list or call.
 * - A dropped connection is forgotten; the next request rebuilds it from the recipe (once per
 *   request: a call whose connection drops is reported as interrupted, and the dispatcher's
 *   policy decides whether it is sent again, on a new connection).
 * - `close()` ends the session (HTTP `DELETE`) and the process (stdio).
 * - At most one source of the `Authorization` header: a recipe header, `auth` or `authProvider`
 *   (checked at construction). Authorization failures are never reported as interruptions: they
 *   reach the caller as `McpUnauthorizedError` or the SDK's `UnauthorizedError`.
 */
export interface McpConnectionOptions {
  /** Sent in `initialize`. Default: `{ name: "tapedeck", version: "0.1.0" }`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Called on `notifications/tools/list_changed` and after a reconnect. Default: none. */
  readonly onToolsChanged?: () => void;
  /** Where `${VAR}` references in the recipe are looked up. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Expiring bearer credentials (Streamable HTTP only): `token()` before every request, one
   * `onUnauthorized()` and one retry on a 401. Default: none.
   */
  readonly auth?: McpBearerAuth;
  /**
   * OAuth (Streamable HTTP only): the SDK's provider, given to the transport, which discovers,
   * registers, refreshes and upscopes. When the user must authorize, the request fails with the
   * SDK's `UnauthorizedError`; call `finishAuth(code)` and send it again. Default: none.
   */
  readonly authProvider?: OAuthClientProvider;
  /**
   * A credential from the vault (Streamable HTTP only): its headers on every request, and its
   * URL when it is a query parameter; a 401 fails the request with `McpCredentialRefusedError`.
   * Exclusive with `auth` and `authProvider`. Default: none.
   */
  readonly vaultCredential?: { readonly name: string; readonly headers: Readonly<Record<string, string>>; readonly url: string };
  /**
   * Answers the server's `elicitation/create` (form mode). Without it, elicitation is not
   * advertised and the server cannot ask. Default: none.
   */
  readonly elicitation?: McpElicitation;
}

/** How a connection answers a server's request for user input. */
export interface McpElicitation {
  /** Fill omitted fields of an accepted answer with the form's defaults (SEP-1034). Default: true. */
  readonly applyDefaults?: boolean;
  /** The answer to one request; `signal` aborts when the server cancels it. */
  respond(request: ElicitRequest["params"], signal: AbortSignal): Promise<ElicitResult>;
}

/** The call got no answer: the connection dropped or could not be made. */
export class McpInterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpInterruptedError";
  }
}

/** The largest stdio message accepted; a result must be ≤ 2 MiB anyway, JSON escaping aside. */
const STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** The server's answer was too large to be read. */
export class McpResultTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpResultTooLargeError";
  }
}

const DEFAULT_CLIENT_INFO = { name: "tapedeck", version: "0.1.0" };

export class McpConnection {
  #client: Promise<Client> | undefined;
  #transport: StdioClientTransport | StreamableHTTPClientTransport | undefined;
  /** The last HTTP transport made, kept after a failed connect: it knows the pending OAuth flow. */
  #httpTransport: StreamableHTTPClientTransport | undefined;
  readonly #fetch: ReturnType<typeof bearerFetch> | undefined;
  #connects = 0;
  /** The stdio transport closed because a message overflowed its buffer. */
  #overflowed = false;
  /** The stdio server wrote something that is not JSON-RPC. */
  #corrupted = false;

  /** Throws when the recipe and the options set the `Authorization` header more than once. */
  constructor(
    private readonly recipe: McpServerRecipe,
    private readonly label: string,
    private readonly options: McpConnectionOptions = {},
  ) {
    assertOneAuthorization(label, "url" in recipe ? recipe.headers : undefined, options);
    if (!("url" in recipe) && (options.auth ?? options.authProvider)) {
      throw new Error(`MCP server ${label}: auth and authProvider apply to Streamable HTTP servers (url), not to stdio servers (command).`);
    }
    if (options.vaultCredential && (options.auth ?? options.authProvider)) throw new Error(`MCP server ${label}: a vault credential cannot be combined with auth or authProvider.`);
    this.#fetch = options.auth ? bearerFetch(options.auth, label) : options.vaultCredential ? vaultFetch(options.vaultCredential, label) : undefined;
  }

  /** Every tool the server lists, all pages. */
  async listTools(): Promise<Tool[]> {
    const client = await this.client();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Calls a tool. Throws `McpInterruptedError` when no answer came; `McpError` for protocol
   * errors; `McpUnauthorizedError` when `auth`'s refreshed token is refused, and the SDK's
   * `UnauthorizedError` when `authProvider` needs the user (see `finishAuth`).
   */
  async callTool(name: string, args: unknown, meta: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<McpCallResult> {
    let client: Client;
    try {
      client = await this.client();
    } catch (error) {
      if (isAuthorizationError(error)) throw error;
      throw new McpInterruptedError(`cannot connect to ${this.label}: ${(error as Error).message}`);
    }
    try {
      const result = await client.callTool({ name, arguments: args as Record<string, unknown>, _meta: meta }, undefined, { timeout: timeoutMs, signal });
      return result as McpCallResult;
    } catch (error) {
      if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
        const overflowed = this.#overflowed;
        this.#overflowed = false;
        this.forget();
        if (overflowed) throw new McpResultTooLargeError(`${this.label} sent a message larger than the stdio transport accepts (${STDIO_MAX_MESSAGE_BYTES} bytes)`);
        throw new McpInterruptedError(`the connection to ${this.label} closed during the call${this.#corrupted ? " (it wrote something that is not JSON-RPC)" : ""}`);
      }
      if (error instanceof McpError || isAuthorizationError(error)) throw error;
      // Transport failures (a refused connection, a reset socket) carry no answer.
      this.forget();
      throw new McpInterruptedError(`${this.label}: ${(error as Error).message}`);
    }
  }

  /**
   * Completes an OAuth authorization-code flow: after `authProvider` sent the user to authorize
   * and a request failed with `UnauthorizedError`, exchanges the code the user came back with.
   * The next request carries the new tokens. Throws `UnauthorizedError` when the exchange fails,
   * and an `Error` when no `authProvider` is set or no request has asked for authorization.
   */
  async finishAuth(authorizationCode: string): Promise<void> {
    const transport = this.#httpTransport;
    if (!this.options.authProvider || !transport) {
      throw new Error(`MCP server ${this.label}: finishAuth needs an authProvider and a request that asked for authorization first.`);
    }
    await transport.finishAuth(authorizationCode);
  }

  async close(): Promise<void> {
    const transport = this.#transport;
    const client = this.#client;
    this.forget();
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
    await (await client?.catch(() => undefined))?.close().catch(() => {});
  }

  private client(): Promise<Client> {
    this.#client ??= this.connect().catch((error: unknown) => {
      this.forget();
      throw error;
    });
    return this.#client;
  }

  private forget(): void {
    this.#client = undefined;
    this.#transport = undefined;
  }

  private async connect(): Promise<Client> {
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, { capabilities: this.capabilities() });
    const elicitation = this.options.elicitation;
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicitation.respond(request.params, extra.signal));
    const env = this.options.env ?? process.env;
    const transport =
      "url" in this.recipe
        ? this.httpTransport(this.recipe, env)
        : new StdioClientTransport({
            command: this.recipe.command,
            args: [...this.recipe.args],
            env: { ...getDefaultEnvironment(), ...expandReferences(this.recipe.env, env, `${this.label}.env`) },
            ...(this.recipe.cwd ? { cwd: this.recipe.cwd } : {}),
            stderr: "ignore",
            maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
          });
    this.#overflowed = false;
    this.#corrupted = false;
    client.onerror = (error: Error) => {
      if (!(transport instanceof StdioClientTransport)) {
        // A response stream cut mid-call is not resumed by our servers: the answer is lost, and
        // the SDK would leave the call waiting for its timeout. End the connection instead, so
        // calls in flight are interruptions now and the next call connects afresh.
        if (/SSE stream disconnected/i.test(error.message)) void transport.close();
        return;
      }
      // Past the buffer the SDK closes the transport itself; say why to the calls it fails.
      if (/ReadBuffer exceeded/i.test(error.message)) this.#overflowed = true;
      // A line that is not JSON-RPC means the stream cannot be trusted: end the connection so
      // calls in flight end now (as interruptions) instead of waiting for their timeout.
      else if (error instanceof SyntaxError || error.name === "ZodError") {
        this.#corrupted = true;
        void transport.close();
      }
    };
    client.onclose = () => {
      if (this.#transport === transport) this.forget();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.options.onToolsChanged?.();
      return Promise.resolve();
    });
    await client.connect(transport);
    this.#transport = transport;
    if (this.#connects++ > 0) this.options.onToolsChanged?.();
    return client;
  }

  private httpTransport(recipe: { readonly url: string; readonly headers?: Readonly<Record<string, string>> }, env: NodeJS.ProcessEnv): StreamableHTTPClientTransport {
    this.#httpTransport = new StreamableHTTPClientTransport(new URL(this.options.vaultCredential?.url ?? recipe.url), {
      requestInit: { headers: expandReferences(recipe.headers, env, `${this.label}.headers`) },
      ...(this.#fetch ? { fetch: this.#fetch } : {}),
      ...(this.options.authProvider ? { authProvider: this.options.authProvider } : {}),
    });
    return this.#httpTransport;
  }

  private capabilities(): ClientCapabilities {
    const elicitation = this.options.elicitation;
    return elicitation ? { elicitation: { form: { applyDefaults: elicitation.applyDefaults ?? true } } } : {};
  }
}

/** Credentials were refused or must be obtained: the same request on a new connection would fail too. */
function isAuthorizationError(error: unknown): boolean {
  return error instanceof McpUnauthorizedError || error instanceof UnauthorizedError;
}
