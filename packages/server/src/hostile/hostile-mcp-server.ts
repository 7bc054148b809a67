import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * A hostile MCP server over Streamable HTTP on 127.0.0.1, for the hostile-input suites. The
 * official SDK's low-level `Server` speaks the protocol, so the tool list can hold what
 * `McpServer` refuses to register (a name twice, names that are not names); three tools answer
 * below the protocol layer what no SDK server would send (`RAW_TOOLS`): nesting deeper than any
 * recursive code can walk, bytes that are not JSON-RPC, or nothing at all.
 *
 * Stateless (a new `Server` per request, JSON answers): nothing it does depends on a session.
 */

/** Names it lists that no toolset may pin, each with the reason the warning gives. */
export const UNSAFE_NAMES = ["then", "__proto__", "constructor", "toString", "", "bad\nname", 'say"hi', "a b"] as const;

/** Listed twice with different definitions: left out. */
export const DIFFERING_DUPLICATE = "dup";
/** Listed twice, identically: pinned once. */
export const SAME_DUPLICATE = "same";

/** How deep `deep`'s structured result nests. */
export const DEEP_NESTING = 200_000;
/** How large `huge`'s text result (and `huge_error`'s error text) is, in bytes (past one recorded value's limit). */
export const HUGE_BYTES = 12 * 1024 * 1024;
/** A tool whose description holds a lone UTF-16 surrogate (its definition has no canonical JSON). */
export const LONE_SURROGATE_TOOL = "lone";

/** Tools answered below the SDK: `deep`, `garbage`, `hang`. */
const RAW_TOOLS = new Set(["deep", "garbage", "hang"]);

const open = { type: "object" as const };
const text = { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] };

/** Every tool the server lists, in order, hostile entries included. */
export const LISTED: readonly Tool[] = [
  { name: "echo", description: "Answers its text.", inputSchema: text },
  { name: "proto_keys", description: "Answers an object whose keys are Object.prototype's members.", inputSchema: open },
  { name: "surrogate", description: "Answers text and keys holding lone UTF-16 surrogates.", inputSchema: open },
  { name: "huge", description: "Answers 12 MiB of text.", inputSchema: open },
  { name: "huge_error", description: "Fails with 12 MiB of error text.", inputSchema: open },
  { name: LONE_SURROGATE_TOOL, description: "A description with a lone \ud800 surrogate.", inputSchema: open },
  { name: "weird_content", description: "Answers content blocks of kinds no client knows.", inputSchema: open },
  { name: "deep", description: "Answers a structured result nested 200,000 levels deep.", inputSchema: open },
  { name: "garbage", description: "Answers bytes that are not JSON-RPC.", inputSchema: open },
  { name: "hang", description: "Never answers.", inputSchema: open },
  { name: DIFFERING_DUPLICATE, description: "The first dup.", inputSchema: open },
  { name: DIFFERING_DUPLICATE, description: "The second dup, which does something else.", inputSchema: text },
  { name: SAME_DUPLICATE, description: "Listed twice, the same each time.", inputSchema: open },
  { name: SAME_DUPLICATE, description: "Listed twice, the same each time.", inputSchema: open },
  ...UNSAFE_NAMES.map((name) => ({ name, description: `A tool named ${JSON.stringify(name)}.`, inputSchema: open })),
];

export interface HostileMcpServer {
  /** The MCP endpoint. */
  readonly url: string;
  /** `tools/call` requests received for `name`. */
  calls(name: string): number;
  /** Resolves once a `tools/call` request for `name` has been received. */
  called(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startHostileMcpServer(): Promise<HostileMcpServer> {
  const calls = new Map<string, number>();
  const held = new Set<ServerResponse>();
  const waiting = new Map<string, (() => void)[]>();
  const count = (name: string): void => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    for (const resolve of waiting.get(name) ?? []) resolve();
    waiting.delete(name);
  };
  const http = createServer((req, res) => {
    handle(req, res, count, held).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls: (name) => calls.get(name) ?? 0,
    called: (name) => (calls.has(name) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(name, [...(waiting.get(name) ?? []), resolve]))),
    close: async () => {
      for (const res of held) res.destroy();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, count: (name: string) => void, held: Set<ServerResponse>): Promise<void> {
  if (req.method !== "POST") return void res.writeHead(405).end();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: number | string; method?: string; params?: { name?: string } };
  const name = body.method === "tools/call" ? String(body.params?.name) : undefined;
  if (name !== undefined) count(name);
  if (name !== undefined && RAW_TOOLS.has(name)) return raw(name, body.id ?? null, res, held);
  const server = new Server({ name: "hostile", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...LISTED] }));
  server.setRequestHandler(CallToolRequestSchema, (call) => answer(call.params.name, call.params.arguments));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => void server.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

function answer(name: string, args: Record<string, unknown> | undefined): CallToolResult {
  switch (name) {
    case "echo":
      return { content: [{ type: "text", text: String(args?.text) }] };
    case "proto_keys":
      // Parsed, so `__proto__` is an own key, as it is in the JSON on the wire.
      return {
        content: [],
        structuredContent: JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"toString":"x","hasOwnProperty":null}') as Record<string, unknown>,
      };
    case "surrogate":
      return { content: [], structuredContent: { text: "lone \ud800 surrogate", ["key \udc00"]: "value" } };
    case "huge":
      return { content: [{ type: "text", text: "x".repeat(HUGE_BYTES) }] };
    case "huge_error":
      return { content: [{ type: "text", text: "e".repeat(HUGE_BYTES) }], isError: true };
    case "weird_content":
      return {
        content: [
          { type: "hologram", data: { frames: 3 } },
          { type: "text", text: 42 },
        ],
      } as unknown as CallToolResult;
    default:
      return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
  }
}

/** The answers no SDK server would send. */
function raw(name: string, id: number | string | null, res: ServerResponse, held: Set<ServerResponse>): void {
  if (name === "hang") return void held.add(res);
  res.writeHead(200, { "content-type": "application/json" });
  if (name === "garbage") return void res.end("}{ this is not JSON-RPC \u0000\u001b[2J");
  // Written as text: JSON.stringify itself could not go this deep.
  const nested = `${'{"a":'.repeat(DEEP_NESTING)}1${"}".repeat(DEEP_NESTING)}`;
  res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[],"structuredContent":${nested}}}`);
}
