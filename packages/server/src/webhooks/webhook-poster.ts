import { describeNetError, PinnedAgents, resolvePublicAddress, systemResolver, type HostResolver } from "@tapedeck/engine/net";
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

  constructor(options: { readonly timeoutMs: number; readonly resolver?: HostResolver }) {
    this.#timeoutMs = options.timeoutMs;
    this.#resolver = options.resolver ?? systemResolver;
    this.#agents = new PinnedAgents({ connectTimeoutMs: options.timeoutMs, timeoutMs: options.timeoutMs });
  }

  async post(target: { readonly url: string; readonly anyAddress: boolean }, headers: Readonly<Record<string, string>>, body: string): Promise<PostResult> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      let dispatcher: Dispatcher | undefined;
      if (!target.anyAddress) {
        const host = new URL(target.url).hostname.replace(/^\[|\]$/g, "");
        const address = await resolvePublicAddress(host, { resolver: this.#resolver, signal });
        if (typeof address !== "string") return { error: `refused: ${address.message}` };
        dispatcher = this.#agents.for(address);
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
