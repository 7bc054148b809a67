import type { Readable } from "node:stream";
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
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerRecipe } from "@tapedeck/protocol";
import { assertOneAuthorization, bearerFetch, McpUnauthorizedError, vaultFetch, type McpBearerAuth } from "./mcp-bearer-auth.js";
import { guardedFetch, McpAddressRefusedError, type McpAddressGuard } from "./mcp-address-guard.js";
import type { McpCallResult } from "./mcp-result.js";
import { expandReferences, referencedValues } from "./mcp-recipe.js";
import { StderrTail } from "./stderr-tail.js";

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
 * - `currentTools()` is the server's tool list as read on the current connection: read once per
 *   connection (the first of a process included) and again after `list_changed`, never per call
 *   (a read that failed stays failed for that connection).
 * - A stdio server's stderr is always read; its last lines (`StderrTail`) explain every failure
 *   of that connection (a start that fails, a connection that closes) and reach `log` when the
 *   server stops on its own.
 * - With `addressGuard`, every HTTP request goes to a checked public address
 *   (`mcp-address-guard.ts`); a refused address fails as `McpAddressRefusedError`, never as an
 *   interruption.
 */
export interface McpConnectionOptions {
  /** Sent in `initialize`. Default: `{ name: "tapedeck", version: "0.1.0" }`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /**
   * Reach the server (Streamable HTTP) only at public addresses, each host resolved once per
   * connection and connected to at the checked address: for a toolset registered with a
   * limited key. Default: none (any address).
   */
  readonly addressGuard?: McpAddressGuard;
  /** Hears what an operator should see: a stdio server that stopped on its own, with its last stderr lines. Default: nowhere. */
  readonly log?: (message: string) => void;
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
  /** The tool list read on a connection (`client`), until the server announces a change. */
  #listed: { readonly client: Client; readonly tools: Promise<Tool[]> } | undefined;
  /** The last lines the current stdio server wrote to stderr. */
  #stderr: StderrTail | undefined;
  /** Transports `close()` ended: their end is not the server stopping on its own. */
  readonly #closedHere = new WeakSet<object>();
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
    if (options.vaultCredential && (options.auth ?? options.authProvider))
      throw new Error(`MCP server ${label}: a vault credential cannot be combined with auth or authProvider.`);
  }

  /** Every tool the server lists, all pages, read now; it becomes the connection's `currentTools()`. */
  async listTools(): Promise<Tool[]> {
    const client = await this.client();
    const tools = this.#readTools(client);
    this.#listed = { client, tools };
    return tools;
  }

  /**
   * The server's tools as listed on the current connection: read when the connection is made
   * (this call makes it if there is none) and after the server announces a change; otherwise
   * answered from memory. Rejects as `listTools` does.
   */
  async currentTools(): Promise<Tool[]> {
    const client = await this.client();
    if (this.#listed?.client !== client) this.#listed = { client, tools: this.#readTools(client) };
    return this.#listed.tools;
  }

  async #readTools(client: Client): Promise<Tool[]> {
    const stderr = this.#stderr;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
    } catch (error) {
      // Kept for the connection: a server that cannot list its tools is not asked again per call.
      if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number))
        throw new Error(await this.#explain(`${error.message} while listing the tools`, stderr));
      throw error;
    }
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
      if (isAuthorizationError(error) || error instanceof McpAddressRefusedError) throw error;
      throw new McpInterruptedError(`cannot connect to ${this.label}: ${(error as Error).message}`);
    }
    try {
      const result = await client.callTool({ name, arguments: args as Record<string, unknown>, _meta: meta }, undefined, { timeout: timeoutMs, signal });
      return result as McpCallResult;
    } catch (error) {
      if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
        const overflowed = this.#overflowed;
        this.#overflowed = false;
        const stderr = this.#stderr;
        this.forget();
        if (overflowed)
          throw new McpResultTooLargeError(`${this.label} sent a message larger than the stdio transport accepts (${STDIO_MAX_MESSAGE_BYTES} bytes)`);
        throw new McpInterruptedError(
          await this.#explain(
            `the connection to ${this.label} closed during the call${this.#corrupted ? " (it wrote something that is not JSON-RPC)" : ""}`,
            stderr,
          ),
        );
      }
      if (error instanceof McpError || isAuthorizationError(error) || error instanceof McpAddressRefusedError) throw error;
      // Transport failures (a refused connection, a reset socket, an answer that is not JSON-RPC) carry no answer.
      this.forget();
      const what = error instanceof SyntaxError ? `${this.label} answered something that is not JSON-RPC` : this.label;
      throw new McpInterruptedError(`${what}: ${(error as Error).message}`);
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
    if (transport) this.#closedHere.add(transport);
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
    this.#listed = undefined;
  }

  /** `message` with the last stderr lines of the stdio server (`stderr`: the connection's that failed), once they are all in. */
  async #explain(message: string, stderr = this.#stderr): Promise<string> {
    if (!stderr) return message;
    await stderr.settled();
    return stderr.explain(message);
  }

  private async connect(): Promise<Client> {
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, { capabilities: this.capabilities() });
    const elicitation = this.options.elicitation;
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicitation.respond(request.params, extra.signal));
    const env = this.options.env ?? process.env;
    let stderr: StderrTail | undefined;
    let transport: StdioClientTransport | StreamableHTTPClientTransport;
    if ("url" in this.recipe) {
      transport = this.httpTransport(this.recipe, env);
    } else {
      transport = new StdioClientTransport({
        command: this.recipe.command,
        args: [...this.recipe.args],
        env: { ...getDefaultEnvironment(), ...expandReferences(this.recipe.env, env, `${this.label}.env`) },
        ...(this.recipe.cwd ? { cwd: this.recipe.cwd } : {}),
        stderr: "pipe",
        maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
      });
      // The values `${VAR}` references gave the server are Tapedeck's secrets: never repeated from its stderr.
      // With stderr "pipe" the SDK gives a PassThrough at once, before the process starts.
      if (transport.stderr) stderr = new StderrTail(transport.stderr as Readable, referencedValues(this.recipe.env, env));
    }
    this.#stderr = stderr;
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
      if (stderr && !this.#closedHere.has(transport)) this.#reportStopped(stderr);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // The next check reads the list again; a read in flight may be from before the change.
      if (this.#listed?.client === client) this.#listed = undefined;
      return Promise.resolve();
    });
    try {
      await client.connect(transport);
    } catch (error) {
      if (!stderr || isAuthorizationError(error)) throw error;
      throw new Error(await this.#explain((error as Error).message, stderr));
    }
    this.#transport = transport;
    return client;
  }

  /** Tells `log` that the stdio server stopped without being asked to, with its last stderr lines. */
  #reportStopped(stderr: StderrTail): void {
    const log = this.options.log;
    if (!log) return;
    void stderr.settled().then(() => log(stderr.explain(`MCP server ${this.label} (stdio) stopped`)));
  }

  private httpTransport(
    recipe: { readonly url: string; readonly headers?: Readonly<Record<string, string>> },
    env: NodeJS.ProcessEnv,
  ): StreamableHTTPClientTransport {
    // A fetch per connection: a guarded one resolves the server's host again for each connection.
    const base: FetchLike = this.options.addressGuard ? guardedFetch(this.options.addressGuard, this.label) : fetch;
    const { auth, vaultCredential } = this.options;
    const wrapped = auth
      ? bearerFetch(auth, this.label, base)
      : vaultCredential
        ? vaultFetch(vaultCredential, this.label, base)
        : this.options.addressGuard
          ? base
          : undefined;
    this.#httpTransport = new StreamableHTTPClientTransport(new URL(vaultCredential?.url ?? recipe.url), {
      requestInit: { headers: expandReferences(recipe.headers, env, `${this.label}.headers`) },
      ...(wrapped ? { fetch: wrapped } : {}),
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
