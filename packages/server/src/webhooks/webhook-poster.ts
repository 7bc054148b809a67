import { describeNetError, PinnedAgents, resolvePublicAddress, systemResolver, type HostResolver, type PublicAddress } from "@tapedeck/engine/net";
import { request, type Dispatcher } from "undici";

/** How one attempt went: the receiver's status when it answered, else why not. */
export interface PostResult {
  readonly statusCode?: number;
  readonly error?: string;
}

/**
 * POSTs webhook bodies. A tenant's endpoint (`anyAddress` false) is reached only at a public
 * address: its host is resolved once, every answer is checked as the `http` tool checks them
 * (private, loopback, link-local, metadata… are refused, IPv4-in-IPv6 included), and the
 * connection goes to the checked address, so a name that answers differently the second time
 * (DNS rebinding) cannot steer the server's POSTs into its own network. The operator's
 * endpoints connect wherever their host resolves (a receiver on loopback is a real setup).
 * Redirects are never followed: the URL registered is the one called.
 */
export class WebhookPoster {
  readonly #timeoutMs: number;
  readonly #resolver: HostResolver;
  readonly #agents: PinnedAgents;
  readonly #allowLoopback: boolean;

  /**
   * `unsafeAllowLoopbackForTests`: TESTS ONLY — a tenant's endpoint may resolve to loopback, so a
   * test can deliver to a receiver on this host through the pinned path. Default false.
   */
  constructor(options: { readonly timeoutMs: number; readonly resolver?: HostResolver; readonly unsafeAllowLoopbackForTests?: boolean }) {
    this.#timeoutMs = options.timeoutMs;
    this.#resolver = options.resolver ?? systemResolver;
    this.#allowLoopback = options.unsafeAllowLoopbackForTests === true;
    this.#agents = new PinnedAgents({ connectTimeoutMs: options.timeoutMs, timeoutMs: options.timeoutMs });
  }

  async post(target: { readonly url: string; readonly anyAddress: boolean }, headers: Readonly<Record<string, string>>, body: string): Promise<PostResult> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      let dispatcher: Dispatcher | undefined;
      if (!target.anyAddress) {
        const host = new URL(target.url).hostname.replace(/^\[|\]$/g, "");
        const found = await resolvePublicAddress(host, { resolver: this.#resolver, signal, allowLoopback: this.#allowLoopback });
        if (!found.ok) return { error: refusalText(found) };
        dispatcher = this.#agents.for(found.address);
      }
      const response = await request(target.url, { method: "POST", headers, body, signal, ...(dispatcher ? { dispatcher } : {}) });
      // The answer's body means nothing here; drop it so the connection is free again.
      await response.body.dump().catch(() => {});
      const { statusCode } = response;
      return statusCode >= 200 && statusCode < 300 ? { statusCode } : { statusCode, error: `the receiver answered HTTP ${statusCode}` };
    } catch (error) {
      if (signal.aborted) return { error: `no answer within ${this.#timeoutMs} ms` };
      return { error: describeNetError(error) };
    }
  }

  async close(): Promise<void> {
    await this.#agents.close();
  }
}

/** Why a tenant's endpoint was not called, for the delivery log (read by the endpoint's owner). */
function refusalText(found: Exclude<PublicAddress, { ok: true }>): string {
  if (found.reason === "unresolved") return `could not resolve ${found.host}: ${found.error}`;
  return `refused: ${found.host} resolves to ${found.verdict.address}, ${found.verdict.range}; webhooks of a limited key are only sent to public addresses. Point the endpoint at a public address.`;
}
