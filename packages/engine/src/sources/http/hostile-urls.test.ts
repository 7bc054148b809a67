import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ToolFailure } from "@tapedeck/protocol";
import { fetchCall, tableResolver } from "../../test-support/loopback-http.js";
import { HttpToolSource } from "./http-tool-source.js";
import { RefusalRule } from "./refusal.js";

/**
 * A corpus of hostile URLs, each sent through the `http` tool with a permissive allow-list and
 * a fake resolver: every one must be refused with the right rule, before anything is resolved
 * (for literals) or connected. No request here can reach a network: they are all refused, and
 * a test that failed would try a loopback or private address, never the Internet.
 */

/** Generous on purpose: hosts and addresses in it are refused by other rules, not by the list. */
const ALLOW = ["*.example.com", "a.com", "api.github.com", "203.0.113.7", "10.0.0.1", "169.254.169.254", "[::1]", "127.0.0.1", "localhost"];

/** DNS as an attacker would set it up for names the allow-list lets through. */
const DNS = {
  "internal.example.com": ["10.0.0.5"],
  "meta.example.com": ["169.254.169.254"],
  "ecs.example.com": ["169.254.170.2"],
  "loop.example.com": ["127.0.0.1"],
  "loop6.example.com": ["::1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "compat.example.com": ["::127.0.0.1"],
  "nat64.example.com": ["64:ff9b::a9fe:a9fe"],
  "sixtofour.example.com": ["2002:c0a8:101::1"],
  "teredo.example.com": ["2001:0:4136:e378:8000:63bf:80ff:fffe"],
  "ula.example.com": ["fd00::1"],
  "linklocal6.example.com": ["fe80::1"],
  "cgnat.example.com": ["100.64.1.1"],
  "multicast.example.com": ["239.255.255.250"],
  "docs.example.com": ["192.0.2.10"],
  "zero.example.com": ["0.0.0.0"],
  "broadcast.example.com": ["255.255.255.255"],
  "bench.example.com": ["198.18.0.1"],
  "private172.example.com": ["172.20.1.1"],
  "private192.example.com": ["192.168.1.10"],
  "secondprivate.example.com": ["93.184.215.14", "10.0.0.1"],
  "firstprivate.example.com": ["10.0.0.1", "93.184.215.14"],
  "hexanswer.example.com": ["0x7f000001"],
  "decimalanswer.example.com": ["2130706433"],
  "zoned.example.com": ["fe80::1%eth0"],
  localhost: ["127.0.0.1", "::1"],
  "a.com": ["10.1.2.3"],
  "api.github.com": ["169.254.169.254"],
};

type Case = readonly [url: string, rule: RefusalRule];
const address = RefusalRule.address;

/** Every numeric spelling of a host is what the WHATWG parser makes of it, then classified. */
const CORPUS: Readonly<Record<string, readonly Case[]>> = {
  "loopback, every spelling": [
    ["http://127.0.0.1/", address],
    ["http://127.1/", address],
    ["http://127.0.1/", address],
    ["http://2130706433/", address],
    ["http://0x7f000001/", address],
    ["http://0x7f.1/", address],
    ["http://0x7F.0x00.0x00.0x01/", address],
    ["http://0177.0.0.1/", address],
    ["http://0177.1/", address],
    ["http://017700000001/", address],
    ["http://127.000.000.001/", address],
    ["http://127.0.0.1./", address],
    ["http://127.255.255.254/", address],
    ["http://%31%32%37.0.0.1/", address],
    ["http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", address],
    ["http://127\u30020\u30020\u30021/", address],
    ["http://[::1]/", address],
    ["http://[0:0:0:0:0:0:0:1]/", address],
    ["http://[0000::0001]/", address],
    ["https://127.0.0.1:8443/admin", address],
  ],
  "private (RFC 1918)": [
    ["http://10.0.0.1/", address],
    ["http://10.255.255.255/", address],
    ["http://0xa.0.0.1/", address],
    ["http://012.0.0.1/", address],
    ["http://167772161/", address],
    ["http://172.16.0.1/", address],
    ["http://172.31.255.255/", address],
    ["http://192.168.0.1/", address],
    ["http://3232235777/", address],
    ["http://0xc0a80101/", address],
    ["http://192.168.1/", address],
  ],
  "link-local and cloud metadata": [
    ["http://169.254.169.254/latest/meta-data/", address],
    ["http://169.254.170.2/v2/credentials", address],
    ["http://2852039166/", address],
    ["http://0xa9fea9fe/", address],
    ["http://0251.0376.0251.0376/", address],
    ["http://169.254.0.1/", address],
    ["http://100.100.100.200/latest/meta-data", address],
    ["http://192.0.0.192/opc/v1/instance/", address],
    ["http://[fe80::1]/", address],
    ["http://[fe80::a9fe:a9fe]/", address],
    ["http://[fd00:ec2::254]/latest/meta-data/", address],
  ],
  "unique-local IPv6": [
    ["http://[fc00::1]/", address],
    ["http://[fd12:3456:789a::1]/", address],
    ["http://[fdff:ffff::1]/", address],
  ],
  "carrier-grade NAT": [
    ["http://100.64.0.1/", address],
    ["http://100.127.255.254/", address],
  ],
  multicast: [
    ["http://224.0.0.1/", address],
    ["http://239.255.255.250/", address],
    ["http://[ff02::1]/", address],
    ["http://[ff05::1:3]/", address],
  ],
  "documentation (even when allowed)": [
    ["http://192.0.2.1/", address],
    ["http://198.51.100.7/", address],
    ["http://203.0.113.7/", address],
    ["http://[2001:db8::1]/", address],
    ["http://[3fff::1]/", address],
  ],
  "unspecified and this-network": [
    ["http://0.0.0.0/", address],
    ["http://0/", address],
    ["http://0x0/", address],
    ["http://0.1.2.3/", address],
    ["http://[::]/", address],
  ],
  benchmarking: [
    ["http://198.18.0.1/", address],
    ["http://198.19.255.255/", address],
    ["http://[2001:2::1]/", address],
  ],
  "reserved and broadcast": [
    ["http://240.0.0.1/", address],
    ["http://255.255.255.255/", address],
    ["http://4294967295/", address],
    ["http://192.0.0.1/", address],
    ["http://192.88.99.1/", address],
    ["http://[100::1]/", address],
    ["http://[2001:10::1]/", address],
    ["http://[5f00::1]/", address],
    ["http://[4000::1]/", address],
  ],
  "IPv4-mapped, -compatible and -translated IPv6": [
    ["http://[::ffff:127.0.0.1]/", address],
    ["http://[::ffff:7f00:1]/", address],
    ["http://[0:0:0:0:0:ffff:127.0.0.1]/", address],
    ["http://[::ffff:10.0.0.1]/", address],
    ["http://[::ffff:169.254.169.254]/", address],
    ["http://[::ffff:192.168.0.1]/", address],
    ["http://[::ffff:100.64.0.1]/", address],
    ["http://[::127.0.0.1]/", address],
    ["http://[::8.8.8.8]/", address],
    ["http://[::ffff:0:127.0.0.1]/", address],
  ],
  NAT64: [
    ["http://[64:ff9b::127.0.0.1]/", address],
    ["http://[64:ff9b::a9fe:a9fe]/", address],
    ["http://[64:ff9b::10.0.0.1]/", address],
    ["http://[64:ff9b:1::1]/", address],
    ["http://[64:ff9b:1::8.8.8.8]/", address],
  ],
  "6to4 (embedded IPv4)": [
    ["http://[2002:7f00:1::]/", address],
    ["http://[2002:a9fe:a9fe::1]/", address],
    ["http://[2002:c0a8:101::1]/", address],
    ["http://[2002:0a00:0001::]/", address],
  ],
  "Teredo (embedded client IPv4)": [
    ["http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", address],
    ["http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", address],
    ["http://[2001:0:4136:e378:8000:63bf:5601:5601]/", address],
    ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", address],
    ["http://[2001:0:7f00:1:8000:63bf:f7f7:f7f7]/", address],
  ],
  "URL-parser confusion": [
    ["http://a.com@127.0.0.1/", RefusalRule.credentials],
    ["http://a.com:80@@127.0.0.1/", RefusalRule.credentials],
    ["http://api.github.com@evil.com/", RefusalRule.credentials],
    ["http://user:pass@api.github.com/", RefusalRule.credentials],
    ["http://a.com%2f@127.0.0.1/", RefusalRule.credentials],
    ["http://[::1]:80@a.com/", RefusalRule.credentials],
    ["http://:@a.com/", address],
    ["http://127.0.0.1#@a.com", address],
    ["http://127.0.0.1?@a.com", address],
    ["http:127.0.0.1/", address],
    ["http://a.com\\@127.0.0.1/", RefusalRule.ambiguousUrl],
    ["http:/\\/127.0.0.1/", RefusalRule.ambiguousUrl],
    ["http://127.0.0.1:80\\@a.com/", RefusalRule.ambiguousUrl],
    ["http://127.0.0.\t1/", RefusalRule.ambiguousUrl],
    ["http://127.0.0.1\n/", RefusalRule.ambiguousUrl],
    ["http://a.com\r\n@127.0.0.1/", RefusalRule.ambiguousUrl],
    [" http://127.0.0.1/", RefusalRule.ambiguousUrl],
    ["http://a.com /", RefusalRule.ambiguousUrl],
    ["http://a.com\u0000.127.0.0.1/", RefusalRule.ambiguousUrl],
  ],
  "schemes other than http and https": [
    ["file:///etc/passwd", RefusalRule.scheme],
    ["ftp://a.com/", RefusalRule.scheme],
    ["gopher://127.0.0.1:6379/_INFO", RefusalRule.scheme],
    ["dict://127.0.0.1:11211/stats", RefusalRule.scheme],
    ["ldap://a.com/", RefusalRule.scheme],
    ["ws://a.com/socket", RefusalRule.scheme],
    ["data:text/plain,hello", RefusalRule.scheme],
    ["javascript:alert(1)", RefusalRule.scheme],
    ["jar:http://a.com!/x", RefusalRule.scheme],
  ],
  "not a URL": [
    ["//a.com/x", RefusalRule.invalidUrl],
    ["a.com/x", RefusalRule.invalidUrl],
    ["http://[::1/", RefusalRule.invalidUrl],
    ["http://256.256.256.256/", RefusalRule.invalidUrl],
    ["http://1.2.3.4.5/", RefusalRule.invalidUrl],
    ["http://[fe80::1%25eth0]/", RefusalRule.invalidUrl],
  ],
  "hosts outside the allow-list": [
    ["http://evil.com/", RefusalRule.hostNotAllowed],
    ["http://example.com/", RefusalRule.hostNotAllowed],
    ["http://a.b.example.com/", RefusalRule.hostNotAllowed],
    ["http://api.github.com.evil.com/", RefusalRule.hostNotAllowed],
    ["http://apigithub.com/", RefusalRule.hostNotAllowed],
    ["http://evil.com/api.github.com", RefusalRule.hostNotAllowed],
    ["http://example.com.evil.com/", RefusalRule.hostNotAllowed],
    ["http://8.8.8.8/", RefusalRule.hostNotAllowed],
    ["http://[2606:4700:4700::1111]/", RefusalRule.hostNotAllowed],
  ],
  "names resolving to refused addresses (fake DNS)": [
    ["http://internal.example.com/", address],
    ["http://meta.example.com/latest/meta-data/", address],
    ["http://ecs.example.com/", address],
    ["http://loop.example.com/", address],
    ["http://loop6.example.com/", address],
    ["http://mapped.example.com/", address],
    ["http://compat.example.com/", address],
    ["http://nat64.example.com/", address],
    ["http://sixtofour.example.com/", address],
    ["http://teredo.example.com/", address],
    ["http://ula.example.com/", address],
    ["http://linklocal6.example.com/", address],
    ["http://cgnat.example.com/", address],
    ["http://multicast.example.com/", address],
    ["http://docs.example.com/", address],
    ["http://zero.example.com/", address],
    ["http://broadcast.example.com/", address],
    ["http://bench.example.com/", address],
    ["http://private172.example.com/", address],
    ["http://private192.example.com/", address],
    ["http://secondprivate.example.com/", address],
    ["http://firstprivate.example.com/", address],
    ["http://hexanswer.example.com/", address],
    ["http://decimalanswer.example.com/", address],
    ["http://zoned.example.com/", address],
    ["http://localhost/", address],
    ["http://LOCALHOST./", address],
    ["http://a.com/", address],
    ["https://api.github.com/", address],
  ],
};

const source = new HttpToolSource({ resolver: tableResolver(DNS) });
const loopbackAllowed = new HttpToolSource({ resolver: tableResolver(DNS), unsafeAllowLoopbackForTests: true });
after(() => Promise.all([source.close(), loopbackAllowed.close()]));

async function refusalOf(http: HttpToolSource, url: string): Promise<ToolFailure> {
  const outcome = await http.call(fetchCall(ALLOW, { url }));
  assert.equal(outcome.kind, "failure", `${JSON.stringify(url)} was not refused: ${JSON.stringify(outcome)}`);
  return (outcome as { failure: ToolFailure }).failure;
}

describe("http tool: hostile URL corpus", () => {
  const cases = Object.values(CORPUS).flat();

  it(`has at least 100 hostile URLs (${cases.length}) in ${Object.keys(CORPUS).length} categories`, () => {
    assert.ok(cases.length >= 100);
  });

  for (const [category, entries] of Object.entries(CORPUS)) {
    it(`refuses ${category} (${entries.length}), saying which rule and what`, async () => {
      for (const [url, rule] of entries) {
        const failure = await refusalOf(source, url);
        assert.equal(failure.code, "refused", `${JSON.stringify(url)}: ${failure.message}`);
        assert.equal((failure.details as { rule?: string }).rule, rule, `${JSON.stringify(url)}: ${failure.message}`);
        assert.match(failure.message, /^The http tool refused the request: /);
        if (rule === address) {
          const { address: refusedAddress, range } = failure.details as { address: string; range: string };
          assert.ok(failure.message.includes(refusedAddress) && failure.message.includes(range), failure.message);
        }
      }
    });
  }

  it("names the range, the block and the embedded address in words", async () => {
    const metadata = await refusalOf(source, "http://2852039166/latest/meta-data/");
    assert.match(metadata.message, /the address 169\.254\.169\.254 is cloud metadata .*\(169\.254\.169\.254\/32\); requests may only go to public addresses/);
    const nat64 = await refusalOf(source, "http://nat64.example.com/");
    assert.match(
      nat64.message,
      /the name nat64\.example\.com resolves to 64:ff9b::a9fe:a9fe, which is NAT64 \(64:ff9b::\/96\) carrying 169\.254\.169\.254, which is cloud metadata/,
    );
    const second = await refusalOf(source, "http://secondprivate.example.com/");
    assert.match(second.message, /resolves to 10\.0\.0\.1, which is private \(RFC 1918\) \(10\.0\.0\.0\/8\)/);
  });

  it("does not resolve a name that the allow-list refuses, nor an IP literal", async () => {
    const resolver = tableResolver(DNS);
    const http = new HttpToolSource({ resolver });
    try {
      for (const [url] of [...CORPUS["hosts outside the allow-list"]!, ...CORPUS["loopback, every spelling"]!]) await refusalOf(http, url);
      assert.deepEqual(resolver.lookups, []);
    } finally {
      await http.close();
    }
  });

  it("with the test-only loopback allowance, still refuses every range but loopback", async () => {
    const ranges = [
      "private (RFC 1918)",
      "link-local and cloud metadata",
      "unique-local IPv6",
      "carrier-grade NAT",
      "multicast",
      "documentation (even when allowed)",
      "NAT64",
      "6to4 (embedded IPv4)",
    ];
    for (const category of ranges) {
      for (const [url, rule] of CORPUS[category]!) {
        const failure = await refusalOf(loopbackAllowed, url);
        assert.equal((failure.details as { rule?: string }).rule, rule, `${url}: ${failure.message}`);
      }
    }
    // Loopback reached through another range's embedding is still refused: the allowance is for loopback itself.
    for (const url of ["http://[::ffff:127.0.0.1]/", "http://[64:ff9b::127.0.0.1]/", "http://mapped.example.com/"]) {
      assert.equal(((await refusalOf(loopbackAllowed, url)).details as { rule?: string }).rule, address, url);
    }
  });
});
