import { isIP } from "node:net";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { fetch as undiciFetch, type Dispatcher, type RequestInit as UndiciRequestInit } from "undici";
import type { PinnedAgents } from "../http/pinned-agents.js";
import { resolvePublicAddress, type PublicAddress } from "../http/public-address.js";
import type { HostResolver } from "../http/resolver.js";

/**
 * Where a tenant's MCP server may be reached: public addresses only, as the `http` tool and a
 * tenant's webhook endpoints (`docs/design/mcp-addresses.md`). Without it, a key limited to a
 * namespace could register `http://169.254.169.254/mcp` or `http://127.0.0.1:5432/mcp` and make
 * the server connect there.
 *
 * Invariants:
 * - Each host a connection talks to (the server, an OAuth server) is resolved once per
 *   connection, every answer is checked (private, loopback, link-local, metadata… refused), and
 *   every request of that connection goes to the checked address (`PinnedAgents`), never to a
 *   second lookup: a name that answers differently later (DNS rebinding) is looked up again
 *   only by the next connection, and checked again then.
 * - Redirects are never followed here (the SDK follows same-origin ones itself, to the same
 *   host, so to the same checked address).
 */

/** How a connection checks and pins the addresses it connects to. */
export interface McpAddressGuard {
  readonly resolver: HostResolver;
  readonly agents: PinnedAgents;
  /** TESTS ONLY: loopback passes (every other refused range stays refused). */
  readonly allowLoopback: boolean;
}

/** The server's host resolves to an address a tenant's toolset may not reach: nothing was sent. */
export class McpAddressRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpAddressRefusedError";
  }
}

/** How long resolving one host may take. */
const RESOLVE_TIMEOUT_MS = 10_000;

/** A fetch for one connection whose requests go only to checked public addresses (see the invariants). */
export function guardedFetch(guard: McpAddressGuard, label: string): FetchLike {
  const pinned = new Map<string, Promise<Dispatcher>>();
  // An address in the URL is checked as it is; a name is resolved.
  const resolver: HostResolver = (host, signal) => (isIP(host) === 0 ? guard.resolver(host, signal) : Promise.resolve([host]));
  const dispatcherFor = (host: string): Promise<Dispatcher> => {
    let found = pinned.get(host);
    if (!found) {
      found = resolvePublicAddress(host, { resolver, signal: AbortSignal.timeout(RESOLVE_TIMEOUT_MS), allowLoopback: guard.allowLoopback }).then((address) => {
        if (!address.ok)
          throw address.reason === "refused"
            ? new McpAddressRefusedError(refusalText(label, address))
            : new Error(`cannot resolve ${address.host}: ${address.error}`);
        return guard.agents.for(address.address);
      });
      // A failed lookup is not kept: the next request (a reconnect) looks again.
      found.catch(() => pinned.delete(host));
      pinned.set(host, found);
    }
    return found;
  };
  return async (url, init) => {
    const target = new URL(url);
    const dispatcher = await dispatcherFor(target.hostname.replace(/^\[|\]$/g, ""));
    // undici's fetch is the one Node's global fetch is built on; it takes a dispatcher.
    return undiciFetch(target, { ...(init as UndiciRequestInit | undefined), redirect: "manual", dispatcher });
  };
}

function refusalText(label: string, found: Extract<PublicAddress, { reason: "refused" }>): string {
  const where =
    found.host === found.verdict.address
      ? `${found.host} is an address in a range`
      : `${found.host} resolves to ${found.verdict.address}, an address in a range`;
  return (
    `MCP server ${label}: ${where} the server does not connect to for tenants (${found.verdict.range}). ` +
    `The toolset was registered with a key limited to a namespace or labels, so its MCP servers are reached only at public addresses. ` +
    `Serve it at a public address, or have the operator register the toolset with an unlimited key.`
  );
}
