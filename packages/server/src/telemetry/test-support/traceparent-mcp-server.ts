import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * A loopback Streamable HTTP MCP server (the official SDK's `Server`, stateless) with one tool,
 * `echo`, that records the trace context each `tools/call` came with (`params._meta.traceparent`,
 * where MCP carries it): what the server's own spans would take as their parent.
 */
export interface TraceparentMcpServer {
  readonly url: string;
  /** The `traceparent` of each call received, in order, with the text it echoed. */
  readonly calls: readonly { readonly text: string; readonly traceparent: string | undefined }[];
  close(): Promise<void>;
}

export async function startTraceparentMcpServer(): Promise<TraceparentMcpServer> {
  const calls: { text: string; traceparent: string | undefined }[] = [];
  const http = createServer((request, response) => {
    const server = new Server({ name: "traced", version: "1.0.0" }, { capabilities: { tools: {} } });
    const inputSchema = { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "echo", description: "Echoes its text.", inputSchema }] }));
    server.setRequestHandler(CallToolRequestSchema, (call) => {
      const text = String(call.params.arguments?.text);
      const traceparent = call.params._meta?.traceparent;
      calls.push({ text, traceparent: typeof traceparent === "string" ? traceparent : undefined });
      return { content: [{ type: "text", text }] };
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
    calls,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
