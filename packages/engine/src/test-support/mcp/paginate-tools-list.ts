import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ListToolsRequest, ListToolsResult, Notification, Request, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";

/**
 * Makes an `McpServer` answer `tools/list` in pages of `pageSize`.
 *
 * `McpServer` always answers `tools/list` in one page and ignores the cursor, and it installs its
 * handler lazily, on the first `registerTool`, so the handler cannot be wrapped afterwards.
 * Hence this must run before any tool is registered: it intercepts that installation and wraps
 * the SDK's handler, so the pages are exactly the SDK's list, sliced. The cursor is the offset
 * of the page, as a decimal string; a cursor that is not one is an InvalidParams error.
 */

type Extra = RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>;
type ListHandler = (request: ListToolsRequest, extra: Extra) => ListToolsResult | Promise<ListToolsResult>;

export function paginateToolsList(server: McpServer, pageSize: number): void {
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  const low = server.server;
  const install = low.setRequestHandler.bind(low);
  const intercept = (schema: unknown, handler: unknown): void => {
    if (schema !== ListToolsRequestSchema) return install(schema as never, handler as never);
    install(ListToolsRequestSchema, paged(handler as ListHandler, pageSize));
  };
  low.setRequestHandler = intercept;
}

function paged(list: ListHandler, pageSize: number): ListHandler {
  return async (request, extra) => {
    const offset = parseCursor(request.params?.cursor);
    const { tools } = await list({ method: "tools/list", params: {} }, extra);
    if (offset > tools.length) throw new McpError(ErrorCode.InvalidParams, `cursor ${offset} is past the end of the list (${tools.length} tools)`);
    const end = offset + pageSize;
    return end < tools.length ? { tools: tools.slice(offset, end), nextCursor: String(end) } : { tools: tools.slice(offset) };
  };
}

function parseCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^(0|[1-9][0-9]*)$/.test(cursor))
    throw new McpError(ErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(cursor)}: pass the nextCursor of the previous page`);
  return Number(cursor);
}
