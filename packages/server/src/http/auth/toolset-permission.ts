import { ApiError } from "../api-error.js";
import type { Caller } from "./caller.js";

/**
 * What a limited caller (a key limited to a namespace or labels, or an end user's token) may
 * not put in a toolset: a stdio MCP server would run a command on the Tapedeck host, and a
 * `${VAR}` reference would send the host's environment (its secrets) to a server the caller
 * chose. Only an unlimited API key — the operator's — may register those.
 */
export function checkToolsetPermission(caller: Caller, spec: { readonly mcpServers?: unknown }): void {
  if (caller.kind === "key" && caller.scope.namespace === undefined && Object.keys(caller.scope.labels).length === 0) return;
  const servers = spec.mcpServers;
  if (typeof servers !== "object" || servers === null) return;
  for (const [group, server] of Object.entries(servers)) {
    if (typeof server !== "object" || server === null) continue;
    if ("command" in server) {
      throw new ApiError(
        "forbidden",
        `mcpServers.${group} is a stdio server: registering it would run a command on the Tapedeck server, which only an unlimited API key may do. Use a server reached by URL.`,
      );
    }
    if (JSON.stringify(server).includes("${")) {
      throw new ApiError(
        "forbidden",
        `mcpServers.${group} references the Tapedeck server's environment (\${…}), which only an unlimited API key may do: it would send the server's secrets to that URL.`,
      );
    }
  }
}
