import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JsonValue } from "@tapedeck/protocol";
import { findKeyShapes } from "./key-shapes.js";
import { LeakScanner } from "./leak-scanner.js";

/** A corpus of secrets in their usual shapes (fake values), each with the marker it must get, and near misses that must stay. */

const r = (unit: string, times: number) => unit.repeat(times);

const FOUND: readonly (readonly [text: string, secret: string, label: string])[] = [
  ["OPENAI_API_KEY=%", `sk-${r("T3BlbkFJ", 6)}`, "openai api key"],
  ['{"key": "%"}', `sk-proj-${r("Ab3_Cd9-", 16)}`, "openai api key"],
  ["key: %", `sk-svcacct-${r("Xy7Zq2", 8)}`, "openai api key"],
  ["x-api-key: %", `sk-ant-api03-${r("Zx9Yw8_v", 12)}-AAAA`, "anthropic api key"],
  ["admin %", `sk-ant-admin01-${r("Qw3Er5Ty", 10)}`, "anthropic api key"],
  ["aws_access_key_id = %", "AKIAIOSFODNN7EXAMPLE", "aws access key id"],
  ["AccessKeyId: %,", "ASIAY34FZKBOKMUTVV7A", "aws access key id"],
  ["aws_secret_access_key = %", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws secret access key"],
  ['"SecretAccessKey": "%"', "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", "aws secret access key"],
  ["AWS_SECRET_ACCESS_KEY='%'", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws secret access key"],
  ["aws-secret-key: %", "wJalrXUtnFEMI+K7MDENG+bPxRfiCYEXAMPLEKEY", "aws secret access key"],
  ["token %", `ghp_${r("a1B2c3D4e5", 3)}123456`, "github token"],
  ["token %", `gho_${r("Z9y8X7w6V5", 3)}abcdef`, "github token"],
  ["token %", `ghu_${r("q1W2e3R4t5", 3)}YUIOPa`, "github token"],
  ["token %", `ghs_${r("m1N2b3V4c5", 3)}XZLKJH`, "github token"],
  ["token %", `ghr_${r("p0O9i8U7y6", 3)}TREWQA`, "github token"],
  ["GITHUB_TOKEN=%", `github_pat_11ABCDEFG0${r("aB3dE6gH9j", 2)}_${r("kL2mN5pQ8r", 6)}`, "github token"],
  ["stripe %", `sk_live_${r("4eC39HqLyjWDarjtT1zdp7dc", 1)}`, "stripe key"],
  ["stripe %", `sk_test_${r("51H8x2Lk", 4)}`, "stripe key"],
  ["stripe %", `rk_live_${r("9fJ3kL0q", 3)}`, "stripe key"],
  ["webhook %", `whsec_${r("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1)}`, "stripe webhook secret"],
  ["slack %", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack token"],
  ["slack %", "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef", "slack token"],
  ["slack %", "xoxa-2-1234567890-abcdefghij", "slack token"],
  ["slack %", "xoxr-1234567890-abcdefghij", "slack token"],
  ["slack %", "xoxs-1234567890-abcdefghij", "slack token"],
  ["google %", "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "google api key"],
  [
    "jwt %",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "jwt",
  ],
  ["unsigned %;", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.", "jwt"],
  ["Authorization: Bearer %", "abcDEF123456789xyzABC", "bearer token"],
  ["authorization: bearer %", "0123456789abcdef0123456789abcdef", "bearer token"],
  ["BEARER\t%", "Zm9vYmFyYmF6cXV4LnRva2Vu==", "bearer token"],
  [
    "key:\n%\nrest",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n-----END RSA PRIVATE KEY-----",
    "private key",
  ],
  ["%", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----", "private key"],
  ["%", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIC6\n-----END PRIVATE KEY-----", "private key"],
  [
    "%",
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----",
    "private key",
  ],
  ["%", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0xyz\n-----END PGP PRIVATE KEY BLOCK-----", "private key"],
  ["cut: %", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oC7IGcqNNf1RoAoGCCqGSM49\nAwEHoUQDQgAE", "private key"],
];

const NEAR_MISSES: readonly string[] = [
  "sk-learn-models-are-great-for-everyone",
  "use sk-short1A here",
  "disk-usage-monitoring-service-v2-Abc123xyz",
  "task-ant-api03-notakeybecauseofprefixxxxxxxxxxxxxxxxxxxxxxxxxxxx",
  "AKIA is a prefix, AKIAIOSFODNN7EXAMPL is 19, AKIAIOSFODNN7EXAMPLEX is 21",
  "akiaiosfodnn7example lower case",
  "xAKIAIOSFODNN7EXAMPLE inside a word",
  "secret_access_key = too-short-value",
  "my secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "ghp_short",
  "ghp_abcdefghijklmnopqrstuvwxyz0123456789_underscore-after",
  "github_pat_short",
  "sk_live_short",
  "pk_live_4eC39HqLyjWDarjtT1zdp7dc publishable, not secret",
  "xoxc-1234567890-abcdefghij",
  "xoxb-short",
  "AIzaTooShort-abc",
  `AIza${r("a", 36)} is one too long`,
  "eyJhbGciOiJIUzI1NiJ9 alone is a header",
  "eyJhbGciOiJIUzI1NiJ9.notjson.sig",
  "a.eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.x (inside a dotted word)",
  "Bearer authentication is described in RFC 6750",
  "Bearer token",
  "Bearer",
  "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
  "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
  "The word skeleton, sk8-board, and ask-ant-questions-here-0123456789ABCdefGHIjklMNOpqrSTU.",
  "[redacted: github token] [redacted: bearer token] [redacted: secret NAME]",
];

describe("leak scanner: key shapes", () => {
  for (const [template, secret, label] of FOUND) {
    it(`redacts ${label}: ${JSON.stringify(template.replace("%", `${secret.slice(0, 12)}…`))}`, () => {
      const text = template.replace("%", secret);
      const scanned = new LeakScanner().scanText(text);
      assert.equal(scanned.value, template.replace("%", `[redacted: ${label}]`));
      assert.equal(scanned.redactions, 1);
    });
  }

  it("keeps every near miss as it is", () => {
    for (const text of NEAR_MISSES) assert.deepEqual(findKeyShapes(text), [], text);
  });

  it("redacts only the token of a Bearer header and the value after an AWS keyword", () => {
    const { value } = new LeakScanner().scanText("Authorization: Bearer abcDEF123456789xyzABC\naws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    assert.equal(value, "Authorization: Bearer [redacted: bearer token]\naws_secret_access_key=[redacted: aws secret access key]");
  });

  it("finds every secret of a text with many, in order", () => {
    const text = FOUND.map(([template, secret]) => template.replace("%", secret)).join("\n");
    const labels = findKeyShapes(text).map((match) => match.label);
    assert.deepEqual(
      labels,
      FOUND.map(([, , label]) => label),
    );
  });
});

describe("leak scanner: known secret values", () => {
  const secret = "s3cr3t-Value/with+chars";
  const scanner = new LeakScanner([{ value: secret, name: "DB_PASSWORD" }, "another-known-secret"]);

  it("redacts the value, and its URL-encoded and base64 forms, naming the secret", () => {
    const text = `raw ${secret}, url ${encodeURIComponent(secret)}, b64 ${Buffer.from(secret).toString("base64")}, b64url ${Buffer.from(secret).toString("base64url")}`;
    const { value, redactions } = scanner.scanText(text);
    assert.equal(
      value,
      "raw [redacted: secret DB_PASSWORD], url [redacted: secret DB_PASSWORD], b64 [redacted: secret DB_PASSWORD], b64url [redacted: secret DB_PASSWORD]",
    );
    assert.equal(redactions, 4);
    assert.equal(scanner.scanText("x another-known-secret y").value, "x [redacted: secret] y");
  });

  it("ignores values too short to tell from ordinary text, and adds secrets with `with`", () => {
    assert.equal(new LeakScanner(["abc"]).scanText("abc abc").value, "abc abc");
    const more = scanner.with([{ value: "run-own-credential", name: "RUN" }]);
    assert.equal(more.scanText(`${secret} run-own-credential`).value, "[redacted: secret DB_PASSWORD] [redacted: secret RUN]");
  });

  it("redacts a longer secret whole even when a shorter one is inside it", () => {
    const nested = new LeakScanner(["inner-secret", "outer-inner-secret-value"]);
    assert.equal(nested.scanText("outer-inner-secret-value / inner-secret").value, "[redacted: secret] / [redacted: secret]");
  });
});

describe("leak scanner: JSON values", () => {
  const token = `ghp_${r("a1B2c3D4e5", 4)}`;

  it("walks strings in objects and arrays, keys too, and keeps the structure", () => {
    const value: JsonValue = { a: [1, token, { [token]: true, nested: [null, `Bearer ${token}`] }], n: 3, ok: false, s: "plain" };
    const scanned = new LeakScanner().scanValue(value);
    assert.deepEqual(scanned.value, {
      a: [1, "[redacted: github token]", { "[redacted: github token]": true, nested: [null, "Bearer [redacted: bearer token]"] }],
      n: 3,
      ok: false,
      s: "plain",
    });
    assert.equal(scanned.redactions, 3);
  });

  it("returns the very same value when there is nothing to redact", () => {
    const value: JsonValue = { a: [1, "two", { three: [null, true] }] };
    assert.equal(new LeakScanner().scanValue(value).value, value);
  });

  it("keeps every entry of an object whose keys collide once redacted", () => {
    const other = `ghp_${r("Z9y8X7w6V5", 4)}`;
    const scanned = new LeakScanner().scanValue({ [token]: 1, [other]: 2, __proto__x: 3 });
    assert.deepEqual(scanned.value, { "[redacted: github token]": 1, "[redacted: github token] (2)": 2, __proto__x: 3 });
  });
});
