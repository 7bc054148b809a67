import { createHash } from "node:crypto";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { toolFailure, type McpServerRecipe } from "@tapedeck/protocol";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { ArgsValidator } from "../../runs/args-validator.js";
import { DEFAULT_TIMEOUT_MS } from "../../limits.js";
import { canonicalJson } from "../../util/canonical-json.js";
import type { Park, PreflightRequest, ToolCallRequest, ToolOutcome, ToolSource } from "../tool-source.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { McpConnection, McpInterruptedError, McpResultTooLargeError } from "./mcp-connection.js";
import { McpCredentialRefusedError, type McpBearerAuth } from "./mcp-bearer-auth.js";
import { injectCredential } from "../../secrets/credential-injection.js";
import { sameCredential, type CredentialLookup, type CredentialResolver, type InjectedCredential } from "../../secrets/credential-resolver.js";
import { mapMcpResult } from "./mcp-result.js";

/**
 * Connections opened with a vault credential (one per end user's credential value, and one per
 * renewal) kept open; older ones are closed. A renewed credential's old connection ages out.
 */
const CREDENTIAL_CONNECTIONS_KEPT = 32;

/** Identifies a credential's value in memory (never stored): connections are per value. */
function credentialDigest(credential: InjectedCredential): string {
  return createHash("sha256").update(JSON.stringify([credential.name, credential.secret])).digest("base64url");
}

/** The `_meta` key that carries a call's idempotency key to MCP servers. */
export const IDEMPOTENCY_META_KEY = "dev.tapedeck/idempotency-key";

/**
 * Calls of MCP tools. Connections are cached by recipe (one per server configuration, shared
 * by every run and toolset that uses it) and closed on `close()`.
 */
export interface McpToolSourceOptions {
  /** Expiring bearer credentials by server URL (seed 002's `auth`): exclusive with an `Authorization` header. */
  readonly auth?: Readonly<Record<string, McpBearerAuth>>;
  /** OAuth providers (the SDK's) by server URL. */
  readonly authProvider?: Readonly<Record<string, OAuthClientProvider>>;
  /** How Tapedeck introduces itself to servers whose spec gives no `clientInfo`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /**
   * Finds the vault credential a Streamable HTTP server's recipe names (`credential`) for a
   * run's calls. Calls with a credential go on a connection of their own per credential value;
   * a 401 parks the call (`credentials.expired`). Default: none.
   */
  readonly credentials?: CredentialResolver;
}

export class McpToolSource implements ToolSource {
  readonly #recipes = new Map<string, McpServerRecipe>();
  readonly #connections = new Map<string, McpConnection>();
  /** Servers whose tool list changed (`list_changed`, a reconnect) since it was last read. */
  readonly #stale = new Set<string>();
  /** The latest tool list read from a server after a change, by server id. */
  readonly #current = new Map<string, Promise<ReadonlyMap<string, Tool> | undefined>>();
  readonly #validator = new ArgsValidator();

  constructor(private readonly options: McpToolSourceOptions = {}) {}

  /** Makes servers known by recipe id (from a pinned toolset). */
  addServers(servers: Readonly<Record<string, McpServerRecipe>>): void {
    for (const [id, recipe] of Object.entries(servers)) this.#recipes.set(id, recipe);
  }

  /** The connection to a known server (not yet connected: connections are lazy). */
  connection(id: string, label = id): McpConnection {
    let connection = this.#connections.get(id);
    if (!connection) {
      const recipe = this.#recipes.get(id);
      if (!recipe) throw new Error(`no MCP server ${id} is known to this engine`);
      const url = "url" in recipe ? recipe.url : undefined;
      const auth = url === undefined ? undefined : this.options.auth?.[url];
      const authProvider = url === undefined ? undefined : this.options.authProvider?.[url];
      connection = new McpConnection(recipe, label, {
        onToolsChanged: () => this.#stale.add(id),
        ...(auth ? { auth } : {}),
        ...(authProvider ? { authProvider } : {}),
        ...(recipe.clientInfo ?? this.options.clientInfo ? { clientInfo: recipe.clientInfo ?? this.options.clientInfo } : {}),
      });
      this.#connections.set(id, connection);
    }
    return connection;
  }

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    const remote = request.tool.remote;
    if (!remote) return { kind: "failure", failure: toolFailure("tool_error", `${request.tool.group}.${request.tool.name} is not an MCP tool.`) };
    let credential = await this.#credentialFor(remote.server, request.runId);
    for (let renewed = false; ; renewed = true) {
      if (credential?.kind === "failure") return { kind: "failure", failure: credential.failure };
      if (credential?.kind === "expired") return { kind: "park", park: credential.park };
      const injected = credential?.credential;
      const outcome = await this.#call(request, remote, injected);
      if (outcome.kind === "park" && injected && !renewed) {
        // Renewed while this call was in flight with the old value: send it again now, not after a renewal that already happened.
        const now = await this.#credentialFor(remote.server, request.runId);
        if (now?.kind !== "ok" || !now.credential || !sameCredential(now.credential, injected)) {
          credential = now;
          if (now?.kind === "ok" && now.credential) continue;
        }
      }
      return injected ? { ...outcome, secrets: injected.secrets } : outcome;
    }
  }

  /** The vault credential a server's recipe names, for a run's calls; undefined when it names none (or there is no vault). */
  async #credentialFor(server: string, runId: string): Promise<CredentialLookup | undefined> {
    const recipe = this.#recipes.get(server);
    if (!this.options.credentials || !recipe || !("url" in recipe) || recipe.credential === undefined) return undefined;
    const url = new URL(recipe.url);
    // Named, it must be there: a missing one fails the call (as for fetch), nothing is sent.
    return this.options.credentials(runId, url.hostname, url.origin, recipe.credential);
  }

  async #call(request: ToolCallRequest, remote: { readonly server: string; readonly name: string }, credential: InjectedCredential | undefined): Promise<ToolOutcome> {
    const meta = { [IDEMPOTENCY_META_KEY]: request.idempotencyKey, traceparent: request.traceparent };
    try {
      const connection = credential ? this.#credentialConnection(remote.server, request.tool.group, credential) : this.connection(remote.server, request.tool.group);
      const result = await connection.callTool(remote.name, request.args, meta, request.tool.policy.timeoutMs ?? DEFAULT_TIMEOUT_MS, request.signal);
      const mapped = mapMcpResult(result);
      return mapped.ok ? { kind: "result", value: mapped.value } : { kind: "failure", failure: mapped.failure };
    } catch (error) {
      if (error instanceof McpInterruptedError) return { kind: "interrupted", reason: error.message };
      if (error instanceof McpCredentialRefusedError) {
        const message = `${error.message} The call waits; renew the credential (tapedeck credentials set, or the API) and it is sent again with the same idempotency key, or reject it.`;
        return { kind: "park", park: { reason: "credentials.expired", message, ...(credential ? { credential: credential.name } : {}) } };
      }
      if (error instanceof McpResultTooLargeError) {
        return { kind: "failure", failure: toolFailure("result_too_large", `${error.message}. Ask the tool for less (a page, a filter, fewer fields).`) };
      }
      if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
        return { kind: "failure", failure: toolFailure("timeout", `${request.tool.group}.${request.tool.name} did not answer in time: ${error.message}`, { retryable: true }) };
      }
      const message = error instanceof Error ? error.message : String(error);
      return { kind: "failure", failure: toolFailure("tool_error", `${request.tool.group}.${request.tool.name}: ${message}`) };
    }
  }

  /**
   * Before a call is first sent: once its server announced a change to its tools (or
   * reconnected), the current list is read (once per change) and compared with what the run
   * pinned. A tool that is gone, or whose new input schema the arguments no longer fit, parks
   * the call; a schema that changed compatibly lets it go. Unchanged servers cost nothing.
   */
  preflight(request: PreflightRequest): Promise<Park | undefined> | undefined {
    const remote = request.tool.remote;
    if (!remote || (!this.#stale.has(remote.server) && !this.#current.has(remote.server))) return undefined;
    return this.#currentTools(remote.server, request.tool.group).then((tools) => {
      if (!tools) return undefined; // the list could not be read: the call itself will tell
      const path = `${request.tool.group}.${request.tool.name}`;
      const now = tools.get(remote.name);
      if (!now) {
        return { reason: "tool.schema_changed", message: `${path} is no longer offered by its MCP server (its tool list changed after the run's toolset was pinned).` };
      }
      if (canonicalJson(now.inputSchema as never) === canonicalJson(request.tool.inputSchema)) return undefined;
      const failure = this.#validator.validate({ ...request.tool, inputSchema: now.inputSchema as never }, request.args);
      if (!failure) return undefined;
      return { reason: "tool.schema_changed", message: `The input schema of ${path} changed on its MCP server and the call's arguments no longer fit it: ${failure.message}` };
    });
  }

  /**
   * The connection that carries one vault credential to a server: keyed by the credential's
   * value (a digest, in memory only), so a renewed credential gets a new connection and users
   * with different credentials never share one.
   */
  #credentialConnection(server: string, label: string, credential: InjectedCredential): McpConnection {
    const recipe = this.#recipes.get(server);
    if (!recipe || !("url" in recipe)) throw new Error(`no MCP server ${server} over HTTP is known to this engine`);
    const id = `${server}#${credentialDigest(credential)}`;
    let connection = this.#connections.get(id);
    if (connection) {
      // Most recently used last: the first in the map is the one to close when there are too many.
      this.#connections.delete(id);
      this.#connections.set(id, connection);
    } else {
      const injected = injectCredential(credential.secret, {}, new URL(recipe.url));
      connection = new McpConnection(recipe, label, {
        onToolsChanged: () => this.#stale.add(server),
        vaultCredential: { name: credential.name, headers: injected.headers, url: injected.url.href },
        ...(recipe.clientInfo ?? this.options.clientInfo ? { clientInfo: recipe.clientInfo ?? this.options.clientInfo } : {}),
      });
      this.#connections.set(id, connection);
      this.#closeOldCredentialConnections();
    }
    return connection;
  }

  /** Keeps at most `CREDENTIAL_CONNECTIONS_KEPT` credential connections open: the least recently used are closed. */
  #closeOldCredentialConnections(): void {
    const kept = [...this.#connections.keys()].filter((id) => id.includes("#"));
    for (const id of kept.slice(0, Math.max(0, kept.length - CREDENTIAL_CONNECTIONS_KEPT))) {
      const old = this.#connections.get(id);
      this.#connections.delete(id);
      // Calls in flight on it end as interruptions, and their policy decides.
      void old?.close().catch(() => {});
    }
  }

  #currentTools(server: string, label: string): Promise<ReadonlyMap<string, Tool> | undefined> {
    let current = this.#current.get(server);
    if (!current || this.#stale.has(server)) {
      this.#stale.delete(server);
      current = this.connection(server, label)
        .listTools()
        .then((tools) => new Map(tools.map((tool) => [tool.name, tool])), () => undefined);
      this.#current.set(server, current);
    }
    return current;
  }

  async close(): Promise<void> {
    const connections = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(connections.map((c) => c.close()));
  }
}
