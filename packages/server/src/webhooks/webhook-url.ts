import { classifyAddress } from "@tapedeck/engine/net";

/**
 * Checks the URL of a new webhook endpoint. A key limited to a namespace or labels belongs to a
 * tenant; letting it point the server's POSTs at `127.0.0.1:5432` or a cloud metadata address
 * would hand it the server's network position. So for a tenant, a host that is an address must
 * be a public one (the `http` tool's ranges: private, loopback, link-local, CGNAT, metadata,
 * IPv4 inside IPv6…; the URL parser has already turned `0x7f.1` or `2130706433` into a dotted
 * quad) and `localhost` names are refused; a name is checked again at every delivery, where it
 * is resolved (`WebhookPoster`). The operator's unlimited key may name any address.
 */

export type UrlCheck =
  /** The URL to store (normalised). */
  | { readonly ok: true; readonly url: string }
  /** Why it is refused, for the caller. */
  | { readonly ok: false; readonly message: string };

export function checkWebhookUrl(text: string, options: { readonly allowPrivate: boolean }): UrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      ok: false,
      message: `url must be an absolute http(s) URL, such as https://example.com/tapedeck-events, not ${JSON.stringify(text.slice(0, 200))}.`,
    };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { ok: false, message: `url must use http or https, not ${url.protocol.replace(/:$/, "")}.` };
  if (url.username !== "" || url.password !== "")
    return {
      ok: false,
      message: "url must not carry a user or password: the endpoint's secret is how it knows the server; check the webhook-signature header.",
    };
  const refusal = options.allowPrivate ? undefined : privateHost(url.hostname);
  if (refusal)
    return { ok: false, message: `url points at ${url.hostname}, ${refusal}: only an unlimited API key may register such an endpoint. Use a public address.` };
  return { ok: true, url: url.href };
}

/** Why a tenant may not name `hostname`, if it may not. */
function privateHost(hostname: string): string | undefined {
  const host = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback name";
  const isAddress = /^[\d.]+$/.test(host) || host.includes(":");
  if (!isAddress) return undefined;
  const verdict = classifyAddress(host);
  return verdict.allowed ? undefined : `an address in a range the server does not call for tenants (${verdict.range})`;
}
