import { BlockList, isIP } from "node:net";

/**
 * Addresses a webhook endpoint of a limited caller may not name: the Tapedeck host itself and
 * private networks. A key limited to a namespace belongs to a tenant; letting it point the
 * server's POSTs at `127.0.0.1:5432` or a cloud metadata address would hand it the server's
 * network position. The operator's unlimited key may (a receiver on loopback is a real setup).
 * Only literal addresses and `localhost` are checked: a name that resolves to a private address
 * is not (yet) caught.
 */
const PRIVATE = new BlockList();
for (const [net, prefix] of [["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.168.0.0", 16], ["224.0.0.0", 4], ["240.0.0.0", 4]] as const) {
  PRIVATE.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [["::", 127], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["::ffff:0:0", 96]] as const) {
  PRIVATE.addSubnet(net, prefix, "ipv6");
}

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
    return { ok: false, message: `url must be an absolute http(s) URL, such as https://example.com/tapedeck-events, not ${JSON.stringify(text.slice(0, 200))}.` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, message: `url must use http or https, not ${url.protocol.replace(/:$/, "")}.` };
  if (url.username !== "" || url.password !== "") return { ok: false, message: "url must not carry a user or password: the endpoint's secret is how it knows the server; check the webhook-signature header." };
  if (!options.allowPrivate && isPrivateHost(url.hostname)) {
    return { ok: false, message: `url points at ${url.hostname}, a loopback or private address: only an unlimited API key may register such an endpoint. Use a public address.` };
  }
  return { ok: true, url: url.href };
}

function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const family = isIP(host);
  return family !== 0 && PRIVATE.check(host, family === 4 ? "ipv4" : "ipv6");
}
