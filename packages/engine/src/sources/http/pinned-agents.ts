import { Agent, buildConnector, type Dispatcher } from "undici";

/**
 * undici dispatchers that connect to one checked address, whatever the host name says.
 *
 * The `http` tool resolves a name once and checks the answer; if the HTTP client resolved it
 * again, a name with a short TTL could answer a public address to the check and a private one
 * to the connection (DNS rebinding). Here the connector is told the address itself: the name
 * is still the URL's host, so the Host header, TLS SNI and certificate checks use the name,
 * but no DNS lookup happens on the way to the socket.
 *
 * One Agent per address, kept for keep-alive reuse (most recently used first, at most
 * `PINNED_AGENTS_KEPT`): a connection in an address's pool was made to that address, so reusing
 * it never reaches another one.
 */

/** Addresses whose connections are kept open for reuse; older ones are closed gracefully. */
const PINNED_AGENTS_KEPT = 32;

/** How long an idle kept-alive connection stays open. */
const KEEP_ALIVE_MS = 4_000;

export class PinnedAgents {
  readonly #agents = new Map<string, Agent>();

  constructor(private readonly options: { readonly connectTimeoutMs: number; readonly timeoutMs: number }) {}

  /** The dispatcher whose every connection goes to `address` (an IPv4 or bare IPv6 address). */
  for(address: string): Dispatcher {
    const kept = this.#agents.get(address);
    if (kept) {
      this.#agents.delete(address);
      this.#agents.set(address, kept);
      return kept;
    }
    const connect = buildConnector({ timeout: this.options.connectTimeoutMs });
    const agent = new Agent({
      connect: (options, callback) => connect({ ...options, hostname: address }, callback),
      keepAliveTimeout: KEEP_ALIVE_MS,
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
    });
    this.#agents.set(address, agent);
    for (const [oldest, old] of this.#agents) {
      if (this.#agents.size <= PINNED_AGENTS_KEPT) break;
      this.#agents.delete(oldest);
      // In-flight requests finish first; nothing waits for it.
      old.close().catch(() => {});
    }
    return agent;
  }

  /** Closes every connection (requests in flight finish first). */
  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close().catch(() => {})));
  }
}
