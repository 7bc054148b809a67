import { parseCanonicalAddress } from "./address-ranges.js";

/**
 * The hosts a toolset lets `fetch` reach. Entries are normalised once, at registration, with
 * the same WHATWG URL parser that reads request URLs, so an entry and a URL naming the same
 * host compare equal whatever their spelling (`0x7f.1` and `127.0.0.1`, `BÜCHER.example` and
 * `xn--bcher-kva.example`).
 *
 * - `api.github.com`: exactly that name (a trailing dot is ignored).
 * - `*.example.com`: exactly one label before `example.com` (`a.example.com`, not
 *   `example.com`, not `a.b.example.com`). A wildcard needs two labels after it: `*.com` is refused.
 * - `203.0.113.7`, `[2001:db8::1]`: exactly that address. A name never matches an address.
 *
 * Being allowed is necessary, not sufficient: the address a host is or resolves to is checked
 * next (`address-ranges.ts`), and a refused range wins over the allow-list.
 */

/** Why an allow-list entry is not valid: a message for the toolset's author. */
export class AllowEntryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AllowEntryError";
  }
}

/** Normalises one entry. Throws `AllowEntryError` saying what is wrong and what to write. */
export function normaliseAllowEntry(entry: string): string {
  const trimmed = entry.trim();
  if (trimmed === "" || trimmed !== entry)
    throw new AllowEntryError(`"${entry}" is not a host: write a name such as "api.github.com", "*.example.com" or an IP address, without spaces`);
  // One colon is a port ("a.com:443"); an IPv6 address has several, or is in brackets.
  const hasPort = entry.startsWith("[") ? !entry.endsWith("]") : entry.split(":").length === 2;
  if (/[/?#@\\%]/.test(entry) || hasPort) {
    throw new AllowEntryError(`"${entry}" must be a host only, without scheme, port, path or user (e.g. "api.github.com")`);
  }
  if (entry.lastIndexOf("*") > 0 || (entry.startsWith("*") && !entry.startsWith("*."))) {
    throw new AllowEntryError(`"${entry}": "*" may only be the whole first label ("*.example.com"), and matches exactly one label`);
  }
  if (entry.startsWith("*.")) {
    const rest = normaliseHost(entry.slice(2), entry);
    if (parseCanonicalAddress(rest) !== undefined) throw new AllowEntryError(`"${entry}": a wildcard matches a label of a name, not part of an IP address`);
    if (rest.split(".").length < 2) throw new AllowEntryError(`"${entry}" would match every name under a top-level domain; name the domain: "*.example.com"`);
    return `*.${rest}`;
  }
  // A bare IPv6 address is accepted as well as a bracketed one.
  const host = !entry.startsWith("[") && entry.includes(":") ? `[${entry}]` : entry;
  return normaliseHost(host, entry);
}

/** The host as the WHATWG URL parser spells it (lower case, punycode, canonical IP), without a trailing dot. */
function normaliseHost(host: string, entry: string): string {
  let url: URL;
  try {
    url = new URL(`http://${host}/`);
  } catch {
    throw new AllowEntryError(`"${entry}" is not a valid host name or IP address`);
  }
  if (url.port !== "" || url.username !== "" || url.password !== "" || url.pathname !== "/") {
    throw new AllowEntryError(`"${entry}" must be a host only, without port, path or user`);
  }
  return stripTrailingDot(url.hostname);
}

export function stripTrailingDot(hostname: string): string {
  return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
}

/** Whether `hostname` (as `URL.hostname` gives it) is allowed by the normalised entries. */
export function isAllowedHost(hostname: string, allow: readonly string[]): boolean {
  const host = stripTrailingDot(hostname);
  const isAddress = parseCanonicalAddress(host) !== undefined;
  for (const entry of allow) {
    if (entry === host) return true;
    if (!isAddress && entry.startsWith("*.")) {
      const dot = host.indexOf(".");
      if (dot > 0 && host.slice(dot + 1) === entry.slice(2)) return true;
    }
  }
  return false;
}
