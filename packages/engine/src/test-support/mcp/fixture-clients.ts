import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ErrorCode, Tool } from "@modelcontextprotocol/sdk/types.js";
import { startHttpFixture } from "./http-fixture.js";
import type { HttpFixture } from "./http-fixture.js";
import type { Misbehaviour } from "./misbehaviour.js";

/**
 * Connects the SDK's own `Client` (no Tapedeck code) to a fixture over stdio or HTTP, so one
 * behavioural suite runs against both transports. Each connection owns what it started:
 * `close()` ends the session and stops the process or the HTTP server.
 */

/** The compiled stdio entry point, for `node <STDIO_MAIN> …`. */
export const STDIO_MAIN = fileURLToPath(new URL("./stdio-main.js", import.meta.url));

/** The compiled loopback preload, for `node --import <FORCE_LOOPBACK> …`. */
export const FORCE_LOOPBACK = fileURLToPath(new URL("./force-loopback.js", import.meta.url));

export interface FixtureFlags {
  many?: number;
  page?: number;
  names?: readonly string[];
  misbehave?: Misbehaviour;
}

export interface Connection {
  readonly client: Client;
  /** Resolves when the transport closes, whoever closed it. */
  readonly closed: Promise<void>;
  /** Transport errors the client reported (`onerror`), in order. */
  readonly errors: Error[];
  /** Resolves with the next transport error. */
  nextError(): Promise<Error>;
  close(): Promise<void>;
}

export type TransportName = "stdio" | "http";

export async function connectFixture(transport: TransportName, flags: FixtureFlags = {}): Promise<Connection & { http?: HttpFixture }> {
  if (transport === "stdio") return connectStdio(flags);
  const http = await startHttpFixture({ manyTools: flags.many, paginate: flags.page, names: flags.names, misbehave: flags.misbehave });
  const connection = await connectHttp(http.url);
  return { ...connection, http, close: async () => (await connection.close(), await http.close()) };
}

export async function connectStdio(flags: FixtureFlags, maxBufferSize?: number): Promise<Connection> {
  const args = [STDIO_MAIN];
  if (flags.many !== undefined) args.push("--many", String(flags.many));
  if (flags.page !== undefined) args.push("--page", String(flags.page));
  if (flags.names !== undefined) args.push("--names", flags.names.join(","));
  if (flags.misbehave !== undefined) args.push("--misbehave", flags.misbehave);
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "ignore", maxBufferSize });
  return connect(transport, () => transport.close());
}

export async function connectHttp(url: string, headers?: Record<string, string>): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  return connect(transport, async () => {
    await transport.terminateSession().catch(() => undefined);
    await transport.close();
  });
}

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport, end: () => Promise<void>): Promise<Connection> {
  const client = new Client({ name: "fixture-test", version: "1.0.0" });
  const errors: Error[] = [];
  const waiting: ((error: Error) => void)[] = [];
  const closed = new Promise<void>((resolve) => (client.onclose = resolve));
  client.onerror = (error) => {
    errors.push(error);
    for (const resolve of waiting.splice(0)) resolve(error);
  };
  await client.connect(transport);
  return {
    client,
    closed,
    errors,
    nextError: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      await end();
      await client.close();
    },
  };
}

/** Every tool, following `nextCursor`; also returns how many pages it took. */
export async function listAllTools(client: Client): Promise<{ tools: Tool[]; pages: number }> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor !== undefined);
  return { tools, pages };
}

/** Matches an `McpError` with `code`, for `assert.rejects`. */
export function mcpError(code: ErrorCode): (error: unknown) => boolean {
  return (error) => error instanceof McpError && error.code === (code as number);
}
