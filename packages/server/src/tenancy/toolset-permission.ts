import type { Permission } from "./permission.js";
import type { Scope } from "./scope.js";

/**
 * What a limited caller (a key limited to a namespace or labels, or an end user's token) may
 * not put in a toolset: a stdio MCP server would run a command on the Tapedeck host, and a
 * `${VAR}` reference would send the host's environment (its secrets) to a server the caller
 * chose. Only an unlimited API key — the operator's — may register those.
 */
export function mayRegisterToolset(scope: Scope, spec: { readonly mcpServers?: unknown }): Permission {
  // An unlimited scope is an unlimited key's: an end user's token always has a namespace.
  if (scope.namespace === undefined && Object.keys(scope.labels).length === 0) return { ok: true };
  const servers = spec.mcpServers;
  if (typeof servers !== "object" || servers === null) return { ok: true };
  for (const [group, server] of Object.entries(servers)) {
    if (typeof server !== "object" || server === null) continue;
    if ("command" in server) {
      return {
        ok: false,
        reason: `mcpServers.${group} is a stdio server: registering it would run a command on the Tapedeck server, which only an unlimited API key may do. Use a server reached by URL.`,
      };
    }
    if (JSON.stringify(server).includes("${")) {
      return {
        ok: false,
        reason: `mcpServers.${group} references the Tapedeck server's environment (\${…}), which only an unlimited API key may do: it would send the server's secrets to that URL.`,
      };
    }
  }
  return { ok: true };
}
