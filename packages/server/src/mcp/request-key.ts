import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

/**
 * The agent tools' "tool call id" of an MCP `tools/call`: the session and the JSON-RPC request id.
 * A host that sends a request again (the same id, after a lost answer) reaches the same run, the
 * same signal; ids are unique only within a session, so the session keeps two sessions' request
 * 1 apart. The id's type is kept: `1` and `"1"` are different JSON-RPC ids.
 */
export function requestCallId(sessionId: string, requestId: RequestId): string {
  return `mcp/${sessionId}/${typeof requestId === "number" ? "n" : "s"}:${requestId}`;
}
