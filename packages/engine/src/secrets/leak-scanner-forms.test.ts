import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeakScanner } from "./leak-scanner.js";
import { ordinaryResults, randomSecrets } from "./test-support/ordinary-results.js";

/**
 * The transformed echoes of a known secret the scanner catches (a server reflecting a
 * credential it was sent), and the false-positive rate on ordinary tool results: zero.
 */

const SECRET = "s3cr3t/Token+Value_2026";
const MARKER = "[redacted: secret API_KEY]";
const scanner = new LeakScanner([{ value: SECRET, name: "API_KEY" }]);
const bytes = Buffer.from(SECRET);

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function base32(data: Buffer): string {
  let bits = "";
  for (const byte of data) bits += byte.toString(2).padStart(8, "0");
  let out = "";
  for (let i = 0; i < bits.length; i += 5) out += BASE32[parseInt(bits.slice(i, i + 5).padEnd(5, "0"), 2)];
  return out.padEnd(Math.ceil(out.length / 8) * 8, "=");
}

/** Each reflection, as a server would write it around the value. */
const ECHOES: readonly (readonly [name: string, text: string])[] = [
  ["raw", `{"token":"${SECRET}"}`],
  ["reversed", `reversed: ${[...SECRET].reverse().join("")}!`],
  ["URL-encoded", `?q=${encodeURIComponent(SECRET)}&x=1`],
  ["double URL-encoded", `next=${encodeURIComponent(encodeURIComponent(SECRET))}`],
  ["every byte percent-encoded (upper)", `v=${[...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("")}`],
  ["base64", `data: ${bytes.toString("base64")}`],
  ["base64url", `data: ${bytes.toString("base64url")}`],
  ["base64 after 1 byte (Basic auth of a 1-letter user)", `Authorization: Basic ${Buffer.from(`u:${SECRET}`).toString("base64")}`],
  ["base64 after 2 bytes, inside a longer blob", `blob ${Buffer.from(`ab${SECRET} and more text after it`).toString("base64")}`],
  ["base64 after 3 bytes", `blob ${Buffer.from(`abc${SECRET}xyz`).toString("base64")}`],
  ["hex", `hex=${bytes.toString("hex")}`],
  ["HEX", `HEX=${bytes.toString("hex").toUpperCase()}`],
  ["base32", `b32 ${base32(bytes)}`],
  ["base32 lower, unpadded", `b32 ${base32(bytes).replace(/=+$/, "").toLowerCase()}`],
  ["JSON-escaped slashes", JSON.stringify({ echo: SECRET }).replace(/\//g, "\\/")],
  ["JSON \\u escapes", `{"echo":"${[...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"}`],
  ["JSON \\u escapes, upper hex", `{"echo":"${[...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`).join("")}"}`],
  ["HTML decimal entities", `<p>${[...SECRET].map((c) => `&#${c.charCodeAt(0)};`).join("")}</p>`],
  ["HTML hex entities", `<p>${[...SECRET].map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join("")}</p>`],
  ["HTML hex entities, upper", `<p>${[...SECRET].map((c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`).join("")}</p>`],
  ["split across lines", `token:\n${SECRET.slice(0, 8)}\n${SECRET.slice(8, 16)}\n${SECRET.slice(16)}\n`],
  ["slash-split", [...SECRET].join("/")],
  ["spaced and reversed", [...SECRET].reverse().join(" ")],
  [
    "base64 wrapped at 76 columns",
    Buffer.from(`${"x".repeat(70)}${SECRET}${"y".repeat(70)}`)
      .toString("base64")
      .replace(/(.{76})/g, "$1\n"),
  ],
];

describe("leak scanner: transformed echoes of a known secret", () => {
  for (const [name, text] of ECHOES) {
    it(`redacts it ${name}`, () => {
      const scanned = scanner.scanText(text);
      assert.ok(scanned.value.includes(MARKER), `${JSON.stringify(text)} became ${JSON.stringify(scanned.value)}`);
      assert.ok(scanned.redactions >= 1);
    });
  }

  it("redacts an HTML-escaped value and keeps the text around each echo", () => {
    const withSpecials = new LeakScanner([{ value: `a<b>&"c'd-9f2k`, name: "X" }]);
    assert.equal(withSpecials.scanText(`<i>a&lt;b&gt;&amp;&quot;c&#39;d-9f2k</i>`).value, "<i>[redacted: secret X]</i>");
    assert.equal(scanner.scanText(`?q=${encodeURIComponent(SECRET)}&x=1`).value, `?q=${MARKER}&x=1`);
    assert.equal(scanner.scanText(`a ${[...SECRET].join("/")} b`).value, `a ${MARKER} b`);
  });
});

describe("leak scanner: ordinary tool results", () => {
  it("redacts none of a 2 MB corpus (JSON, HTML, Markdown, code, base64, hex hashes, UUIDs) with 30 secrets known", () => {
    const secrets = randomSecrets(30);
    const many = new LeakScanner(secrets.map((value, i) => ({ value, name: `S${i}` })));
    const corpus = ordinaryResults(2 * 1024 * 1024);
    const redacted = corpus.filter((result) => many.scanText(result.text).value !== result.text);
    assert.deepEqual(
      redacted.map((r) => `${r.kind}: ${many.scanText(r.text).value.slice(0, 200)}`),
      [],
      `false positives: ${redacted.length} of ${corpus.length} results`,
    );
    // The secrets themselves, dropped into the same results, are found.
    const planted = corpus.slice(0, secrets.length).map((r, i) => `${r.text} ${secrets[i]}`);
    assert.ok(planted.every((text) => many.scanText(text).value !== text));
  });
});
