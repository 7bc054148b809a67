import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * A Streamable HTTP MCP server on 127.0.0.1 with one tool, `echo` (the official SDK's `Server`,
 * stateless, JSON answers). `echo` takes `text`, and also requires `lang` once `redeployed()`
 * says so (a schema that changed under a sleeping run). Counts every HTTP request and call.
 */
export interface EchoMcpServer {
  readonly url: string;
  /** HTTP requests received, of any kind. */
  requests(): number;
  /** `tools/call` requests received. */
  calls(): number;
  close(): Promise<void>;
}

export async function startEchoMcpServer(redeployed: () => boolean = () => false): Promise<EchoMcpServer> {
  let requests = 0;
  let calls = 0;
  const http = createServer((request, response) => {
    requests += 1;
    const server = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } });
    const required = redeployed() ? ["text", "lang"] : ["text"];
    const inputSchema = { type: "object" as const, properties: { text: { type: "string" }, lang: { type: "string" } }, required };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "echo", description: "Echoes its text.", inputSchema }] }));
    server.setRequestHandler(CallToolRequestSchema, (call) => {
      calls += 1;
      return { content: [{ type: "text", text: String(call.params.arguments?.text) }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => void server.close());
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    requests: () => requests,
    calls: () => calls,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
