import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerRecipe } from "@tapedeck/protocol";
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
 */
export interface McpConnectionOptions {
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Called on `notifications/tools/list_changed` and after a reconnect. */
  readonly onToolsChanged?: () => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** The call got no answer: the connection dropped or could not be made. */
export class McpInterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpInterruptedError";
  }
}

const DEFAULT_CLIENT_INFO = { name: "tapedeck", version: "0.1.0" };

export class McpConnection {
  #client: Promise<Client> | undefined;
  #transport: StdioClientTransport | StreamableHTTPClientTransport | undefined;
  #connects = 0;

  constructor(
    private readonly recipe: McpServerRecipe,
    private readonly label: string,
    private readonly options: McpConnectionOptions = {},
  ) {}

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

  /** Calls a tool. Throws `McpInterruptedError` when no answer came; `McpError` for protocol errors. */
  async callTool(name: string, args: unknown, meta: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<McpCallResult> {
    let client: Client;
    try {
      client = await this.client();
    } catch (error) {
      throw new McpInterruptedError(`cannot connect to ${this.label}: ${(error as Error).message}`);
    }
    try {
      const result = await client.callTool({ name, arguments: args as Record<string, unknown>, _meta: meta }, undefined, { timeout: timeoutMs, signal });
      return result as McpCallResult;
    } catch (error) {
      if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
        this.forget();
        throw new McpInterruptedError(`the connection to ${this.label} closed during the call`);
      }
      if (error instanceof McpError) throw error;
      // Transport failures (a refused connection, a reset socket) carry no answer.
      this.forget();
      throw new McpInterruptedError(`${this.label}: ${(error as Error).message}`);
    }
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
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, { capabilities: {} });
    const env = this.options.env ?? process.env;
    const transport =
      "url" in this.recipe
        ? new StreamableHTTPClientTransport(new URL(this.recipe.url), {
            requestInit: { headers: expandReferences(this.recipe.headers, env, `${this.label}.headers`) },
          })
        : new StdioClientTransport({
            command: this.recipe.command,
            args: [...this.recipe.args],
            env: { ...getDefaultEnvironment(), ...expandReferences(this.recipe.env, env, `${this.label}.env`) },
            ...(this.recipe.cwd ? { cwd: this.recipe.cwd } : {}),
            stderr: "ignore",
          });
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
}
