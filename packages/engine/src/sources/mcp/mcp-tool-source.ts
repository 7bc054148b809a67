import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { toolFailure, type McpServerRecipe } from "@tapedeck/protocol";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "../tool-source.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { McpConnection, McpInterruptedError, McpResultTooLargeError } from "./mcp-connection.js";
import type { McpBearerAuth } from "./mcp-bearer-auth.js";
import { mapMcpResult } from "./mcp-result.js";

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
}

export class McpToolSource implements ToolSource {
  readonly #recipes = new Map<string, McpServerRecipe>();
  readonly #connections = new Map<string, McpConnection>();

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
    const meta = { [IDEMPOTENCY_META_KEY]: request.idempotencyKey, traceparent: request.traceparent };
    try {
      const connection = this.connection(remote.server, request.tool.group);
      const result = await connection.callTool(remote.name, request.args, meta, request.tool.policy.timeoutMs, request.signal);
      const mapped = mapMcpResult(result);
      return mapped.ok ? { kind: "result", value: mapped.value } : { kind: "failure", failure: mapped.failure };
    } catch (error) {
      if (error instanceof McpInterruptedError) return { kind: "interrupted", reason: error.message };
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

  async close(): Promise<void> {
    const connections = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(connections.map((c) => c.close()));
  }
}
