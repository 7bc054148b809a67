import ipaddr from "ipaddr.js";

/**
 * Which IP addresses the `http` tool may connect to: global unicast only. Everything else —
 * private, loopback, link-local, unique-local, CGNAT, multicast, documentation, benchmarking,
 * reserved, broadcast, unspecified, cloud metadata — is refused, for IPv4 and IPv6 alike.
 *
 * Invariants:
 * - Deny by default: an address is allowed only if no refused range holds it AND ipaddr.js
 *   calls it `unicast` AND (IPv6) it is inside 2000::/3, the global unicast block. A range
 *   missing from the table below is caught by the last two checks.
 * - IPv6 addresses that carry an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated,
 *   NAT64, 6to4, Teredo) are judged by the IPv4 address inside them too: `::ffff:127.0.0.1`,
 *   `64:ff9b::a9fe:a9fe` and `2002:7f00:1::` reach loopback or metadata through a translator.
 * - Input is an address in a canonical spelling (from the WHATWG URL parser or a DNS answer);
 *   any other spelling (`0x7f.1`, `2130706433`) is not an address here and is refused by the caller.
 */

export type AddressVerdict =
  /** A global unicast address: a request may connect to it. */
  | { readonly allowed: true; readonly address: string }
  /**
   * In a refused range. `range` says which in words, `cidr` is the block; `embedded` is the IPv4
   * address inside an IPv6 one when that is what decided; `loopback` marks loopback addresses
   * (the only ones the test-only allowance lets through).
   */
  | {
      readonly allowed: false;
      readonly address: string;
      readonly range: string;
      readonly cidr: string;
      readonly embedded?: string;
      readonly loopback?: boolean;
    };

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

interface Range {
  readonly cidr: string;
  readonly name: string;
  readonly block: [Ip, number];
}

function ranges(table: readonly (readonly [cidr: string, name: string])[]): Range[] {
  return table.map(([cidr, name]) => ({ cidr, name, block: ipaddr.parseCIDR(cidr) }));
}

/** Refused IPv4 ranges, most specific first (IANA IPv4 special-purpose registry, plus metadata). */
const IPV4_REFUSED = ranges([
  ["169.254.169.254/32", "cloud metadata (AWS, GCP, Azure, OpenStack)"],
  ["169.254.170.2/32", "cloud metadata (AWS ECS task credentials)"],
  ["100.100.100.200/32", "cloud metadata (Alibaba Cloud)"],
  ["192.0.0.192/32", "cloud metadata (Oracle Cloud)"],
  ["0.0.0.0/8", 'unspecified ("this network")'],
  ["10.0.0.0/8", "private (RFC 1918)"],
  ["100.64.0.0/10", "carrier-grade NAT (shared address space, RFC 6598)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private (RFC 1918)"],
  ["192.0.0.0/24", "IETF protocol assignments (reserved)"],
  ["192.0.2.0/24", "documentation (TEST-NET-1)"],
  ["192.88.99.0/24", "6to4 relay anycast (reserved)"],
  ["192.168.0.0/16", "private (RFC 1918)"],
  ["198.18.0.0/15", "benchmarking (RFC 2544)"],
  ["198.51.100.0/24", "documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "documentation (TEST-NET-3)"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["240.0.0.0/4", "reserved (future use)"],
]);

/** Refused IPv6 ranges that carry no IPv4 address, most specific first (IANA IPv6 special-purpose registry, plus metadata). */
const IPV6_REFUSED = ranges([
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["fd00:ec2::254/128", "cloud metadata (AWS, IPv6)"],
  ["100::/64", "discard-only (RFC 6666)"],
  ["2001:2::/48", "benchmarking (RFC 5180)"],
  ["2001:db8::/32", "documentation (RFC 3849)"],
  ["3fff::/20", "documentation (RFC 9637)"],
  ["2001:10::/28", "ORCHID (deprecated)"],
  ["2001:20::/28", "ORCHIDv2"],
  ["2001::/23", "IETF protocol assignments (reserved)"],
  ["fc00::/7", "unique-local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local (deprecated)"],
  ["ff00::/8", "multicast"],
  ["5f00::/16", "SRv6 segment identifiers (RFC 9602)"],
]);

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/** IPv6 blocks that embed an IPv4 address, and where. */
const EMBEDDING = {
  mapped: ipaddr.parseCIDR("::ffff:0:0/96"),
  translated: ipaddr.parseCIDR("::ffff:0:0:0/96"),
  compatible: ipaddr.parseCIDR("::/96"),
  nat64: ipaddr.parseCIDR("64:ff9b::/96"),
  nat64Local: ipaddr.parseCIDR("64:ff9b:1::/48"),
  sixToFour: ipaddr.parseCIDR("2002::/16"),
  teredo: ipaddr.parseCIDR("2001::/32"),
} as const;

/** Parses an address in a canonical spelling: dotted-quad IPv4 or IPv6 (brackets allowed). Undefined otherwise. */
export function parseCanonicalAddress(text: string): Ip | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (!bare.includes(":")) return undefined;
  // IPv6 through the WHATWG parser first: ipaddr.js reads `::127.0.0.1` as `::ffff:127.0.0.1`,
  // and one parser deciding what an address is leaves nothing for two to disagree on.
  let normalised: string;
  try {
    normalised = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  return ipaddr.IPv6.isValid(normalised) ? ipaddr.IPv6.parse(normalised) : undefined;
}

/** Classifies an address (see the invariants above). `text` must be canonical; anything else is refused. */
export function classifyAddress(text: string): AddressVerdict {
  const ip = parseCanonicalAddress(text);
  if (!ip) return { allowed: false, address: text, range: "not an IP address in a standard spelling", cidr: "-" };
  return ip.kind() === "ipv4" ? classifyV4(ip as ipaddr.IPv4, text) : classifyV6(ip as ipaddr.IPv6, text);
}

function classifyV4(ip: ipaddr.IPv4, address: string): AddressVerdict {
  for (const range of IPV4_REFUSED) {
    if (ip.match(range.block)) return refused(address, range.name, range.cidr, undefined, range.cidr === "127.0.0.0/8");
  }
  const kind = ip.range();
  if (kind !== "unicast") return refused(address, `special-purpose (${kind})`, "-");
  return { allowed: true, address };
}

function classifyV6(ip: ipaddr.IPv6, address: string): AddressVerdict {
  if (ip.zoneId !== undefined) return refused(address, "scoped (has a zone id)", "-");
  const embedded = embeddedV4(ip);
  if (embedded) {
    const inner = classifyV4(embedded.v4, embedded.v4.toString());
    const carrying = `${embedded.name} (${embedded.cidr}) carrying ${inner.address}`;
    if (!inner.allowed)
      return refused(address, `${carrying}, which is ${inner.range}${inner.cidr === "-" ? "" : ` (${inner.cidr})`}`, embedded.cidr, inner.address);
    if (embedded.alwaysRefused) return refused(address, carrying, embedded.cidr, inner.address);
    return { allowed: true, address };
  }
  if (ip.match(EMBEDDING.nat64Local)) return refused(address, "local-use NAT64 (RFC 8215)", "64:ff9b:1::/48");
  for (const range of IPV6_REFUSED) {
    if (ip.match(range.block)) return refused(address, range.name, range.cidr, undefined, range.cidr === "::1/128");
  }
  if (!ip.match(GLOBAL_UNICAST_V6)) return refused(address, "outside global unicast (2000::/3)", "-");
  const kind = ip.range();
  if (kind !== "unicast") return refused(address, `special-purpose (${kind})`, "-");
  return { allowed: true, address };
}

/** The IPv4 address an IPv6 one carries, if it is in a block that embeds one. */
function embeddedV4(ip: ipaddr.IPv6): { v4: ipaddr.IPv4; name: string; cidr: string; alwaysRefused?: boolean } | undefined {
  const p = ip.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  if (ip.match(EMBEDDING.mapped)) return { v4: v4(p[6]!, p[7]!), name: "IPv4-mapped", cidr: "::ffff:0:0/96" };
  if (ip.match(EMBEDDING.translated)) return { v4: v4(p[6]!, p[7]!), name: "IPv4-translated", cidr: "::ffff:0:0:0/96" };
  // `::` and `::1` are in ::/96 but are not IPv4-compatible addresses: the table names them.
  if (ip.match(EMBEDDING.compatible) && (p[6]! !== 0 || p[7]! > 1)) {
    return { v4: v4(p[6]!, p[7]!), name: "IPv4-compatible (deprecated)", cidr: "::/96", alwaysRefused: true };
  }
  if (ip.match(EMBEDDING.nat64)) return { v4: v4(p[6]!, p[7]!), name: "NAT64", cidr: "64:ff9b::/96" };
  if (ip.match(EMBEDDING.sixToFour)) return { v4: v4(p[1]!, p[2]!), name: "6to4", cidr: "2002::/16" };
  if (ip.match(EMBEDDING.teredo)) {
    // Teredo: the server's IPv4 in bits 32–63, the client's (inverted) in bits 96–127. Either can be the target.
    const client = v4(~p[6]! & 0xffff, ~p[7]! & 0xffff);
    const server = v4(p[2]!, p[3]!);
    const clientVerdict = classifyV4(client, client.toString());
    return { v4: clientVerdict.allowed ? server : client, name: "Teredo", cidr: "2001::/32" };
  }
  return undefined;
}

function refused(address: string, range: string, cidr: string, embedded?: string, loopback?: boolean): AddressVerdict {
  return { allowed: false, address, range, cidr, ...(embedded === undefined ? {} : { embedded }), ...(loopback ? { loopback } : {}) };
}
