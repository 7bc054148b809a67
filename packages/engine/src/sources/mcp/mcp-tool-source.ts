import { createHash } from "node:crypto";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { toolFailure, type McpServerRecipe } from "@tapedeck/protocol";
import { DEFAULT_TIMEOUT_MS } from "../../limits.js";
import type { Park, ToolCallRequest, ToolOutcome, ToolSource } from "../tool-source.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { PinnedAgents } from "../http/pinned-agents.js";
import { systemResolver, type HostResolver } from "../http/resolver.js";
import { McpAddressRefusedError, type McpAddressGuard } from "./mcp-address-guard.js";
import { McpConnection, McpInterruptedError, McpResultTooLargeError, type McpConnectionOptions } from "./mcp-connection.js";
import { ToolSchemaCheck } from "./tool-schema-check.js";
import { McpCredentialRefusedError, type McpBearerAuth } from "./mcp-bearer-auth.js";
import { injectCredential } from "../../secrets/credential-injection.js";
import { sameCredential, type CredentialLookup, type CredentialResolver, type InjectedCredential } from "../../secrets/credential-resolver.js";
import { boundedFailureText, mapMcpResult } from "./mcp-result.js";

/**
 * Connections opened with a vault credential (one per end user's credential value, and one per
 * renewal) kept open; older ones are closed. A renewed credential's old connection ages out.
 */
const CREDENTIAL_CONNECTIONS_KEPT = 32;

/** Identifies a credential's value in memory (never stored): connections are per value. */
function credentialDigest(credential: InjectedCredential): string {
  return createHash("sha256")
    .update(JSON.stringify([credential.name, credential.secret]))
    .digest("base64url");
}

/** The `_meta` key that carries a call's idempotency key to MCP servers. */
export const IDEMPOTENCY_META_KEY = "dev.tapedeck/idempotency-key";

/** How long connecting to a guarded server's checked address may take. */
const GUARDED_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Calls of MCP tools. Connections are cached by recipe (one per server configuration, shared
 * by every run and toolset that uses it) and closed on `close()`.
 *
 * Every call (every attempt, re-sends after a restart included) is checked against the tool
 * list its connection read when it was made (`ToolSchemaCheck`): one `tools/list` per
 * connection and per `list_changed`, so a schema that changed while the run slept, in this
 * process or before it started, parks the call instead of sending it. A recipe with
 * `addresses: "public"` (a toolset registered with a limited key) is reached only at checked
 * public addresses (`mcp-address-guard.ts`).
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
  /** Resolves the hosts of servers reached only at public addresses (`addresses: "public"`). Default: the system's resolver. */
  readonly resolver?: HostResolver;
  /**
   * TESTS ONLY, never in production: servers reached only at public addresses may also be on
   * loopback, so a test can serve one locally; every other refused range stays refused. Default false.
   */
  readonly unsafeAllowLoopbackForTests?: boolean;
  /** Hears what an operator should see: a stdio server that stopped on its own, with its last stderr lines. Default: nowhere. */
  readonly log?: (message: string) => void;
}

export class McpToolSource implements ToolSource {
  readonly #recipes = new Map<string, McpServerRecipe>();
  readonly #connections = new Map<string, McpConnection>();
  readonly #schemas = new ToolSchemaCheck();
  /** Connections to checked addresses, for servers reached only at public ones. */
  readonly #agents = new PinnedAgents({ connectTimeoutMs: GUARDED_CONNECT_TIMEOUT_MS, timeoutMs: 0 });
  readonly #guard: McpAddressGuard;

  constructor(private readonly options: McpToolSourceOptions = {}) {
    this.#guard = { resolver: options.resolver ?? systemResolver, agents: this.#agents, allowLoopback: options.unsafeAllowLoopbackForTests === true };
  }

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
        ...this.#common(recipe),
        ...(auth ? { auth } : {}),
        ...(authProvider ? { authProvider } : {}),
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
      if (outcome.kind === "park" && outcome.park.reason === "credentials.expired" && injected && !renewed) {
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

  async #call(
    request: ToolCallRequest,
    remote: { readonly server: string; readonly name: string },
    credential: InjectedCredential | undefined,
  ): Promise<ToolOutcome> {
    const meta = { [IDEMPOTENCY_META_KEY]: request.idempotencyKey, traceparent: request.traceparent };
    try {
      const connection = credential
        ? this.#credentialConnection(remote.server, request.tool.group, credential)
        : this.connection(remote.server, request.tool.group);
      const changed = request.schemaChangeApproved === true ? undefined : await this.#schemaChange(connection, request, remote.name);
      if (changed) return { kind: "park", park: changed };
      const result = await connection.callTool(remote.name, request.args, meta, request.tool.policy.timeoutMs ?? DEFAULT_TIMEOUT_MS, request.signal);
      const mapped = mapMcpResult(result);
      return mapped.ok ? { kind: "result", value: mapped.value } : { kind: "failure", failure: mapped.failure };
    } catch (error) {
      if (error instanceof McpInterruptedError) return { kind: "interrupted", reason: error.message };
      if (error instanceof McpCredentialRefusedError) {
        const message = `${error.message} The call waits; renew the credential (tapedeck credentials set, or the API) and it is sent again with the same idempotency key, or reject it.`;
        return { kind: "park", park: { reason: "credentials.expired", message, ...(credential ? { credential: credential.name } : {}) } };
      }
      if (error instanceof McpAddressRefusedError) return { kind: "failure", failure: toolFailure("refused", error.message) };
      if (error instanceof McpResultTooLargeError) {
        return { kind: "failure", failure: toolFailure("result_too_large", `${error.message}. Ask the tool for less (a page, a filter, fewer fields).`) };
      }
      if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
        return {
          kind: "failure",
          failure: toolFailure("timeout", `${request.tool.group}.${request.tool.name} did not answer in time: ${error.message}`, { retryable: true }),
        };
      }
      const path = `${request.tool.group}.${request.tool.name}`;
      if (error instanceof McpError && error.code === (ErrorCode.InvalidParams as number) && error.message.includes("Invalid tools/call result")) {
        // The SDK's validation of the answer: its zod report is long and says nothing to the model.
        const message = `${path}: its MCP server answered something that is not a tools/call result (content of an unknown kind, or fields of the wrong type), so the answer could not be read; the tool may have run. Its owner must fix the server.`;
        return { kind: "failure", failure: toolFailure("tool_error", message) };
      }
      const message = error instanceof Error ? error.message : String(error);
      return { kind: "failure", failure: toolFailure("tool_error", boundedFailureText(`${path}: ${message}`)) };
    }
  }

  /**
   * Why the call must wait for the harness because its tool changed on the server (see the
   * class comment), or undefined. The list is the one the connection that will carry the call
   * read when it was made; when it cannot be read, the call goes and tells what is wrong.
   */
  async #schemaChange(connection: McpConnection, request: ToolCallRequest, remoteName: string): Promise<Park | undefined> {
    let tools;
    try {
      tools = await connection.currentTools();
    } catch {
      return undefined;
    }
    return this.#schemas.park(request.tool, remoteName, request.args, tools);
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
        ...this.#common(recipe),
        vaultCredential: { name: credential.name, headers: injected.headers, url: injected.url.href },
      });
      this.#connections.set(id, connection);
      this.#closeOldCredentialConnections();
    }
    return connection;
  }

  /** The options every connection to `recipe` gets: its client info, its address rule, the log. */
  #common(recipe: McpServerRecipe): McpConnectionOptions {
    const clientInfo = recipe.clientInfo ?? this.options.clientInfo;
    return {
      ...(clientInfo ? { clientInfo } : {}),
      ...("url" in recipe && recipe.addresses === "public" ? { addressGuard: this.#guard } : {}),
      ...(this.options.log ? { log: this.options.log } : {}),
    };
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

  async close(): Promise<void> {
    const connections = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(connections.map((c) => c.close()));
    await this.#agents.close();
  }
}
