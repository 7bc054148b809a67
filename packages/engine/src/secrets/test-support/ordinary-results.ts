import { createHash } from "node:crypto";

/**
 * A corpus of ordinary tool results, none of which holds a secret: what the leak scanner must
 * leave alone. JSON API responses, HTML pages, Markdown, code, base64 blobs of ordinary data,
 * hex hashes and UUIDs, generated from a seed (the same corpus every run), with random
 * identifiers, so that near-random strings (what encoded secrets look like) are everywhere.
 * Used by the scanner's false-positive test and its benchmark.
 */

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when " +
  "your can said there use an each which she do how their if will up other about out many then them these so some her would make like him " +
  "into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did " +
  "get come made may part order invoice customer shipment status pending delivered account balance report summary request response"
).split(" ");

export interface OrdinaryResult {
  readonly kind: string;
  readonly text: string;
}

/** `count` results of every kind, about `bytes` in all. */
export function ordinaryResults(bytes: number, seed = 2026): OrdinaryResult[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const id = (n: number, alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") =>
    Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
  const uuid = () => {
    const hex = id(32, "0123456789abcdef");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  };
  const sha = (text: string) => createHash("sha256").update(text).digest("hex");
  const makers: Record<string, () => string> = {
    json: () =>
      JSON.stringify({
        id: uuid(),
        object: "order",
        created: 1_700_000_000 + Math.floor(next() * 1e8),
        customer: { id: `cus_${id(14)}`, name: words(2), email: `${id(8).toLowerCase()}@example.com` },
        items: Array.from({ length: 3 }, () => ({ sku: id(10).toUpperCase(), quantity: Math.floor(next() * 9) + 1, note: words(6) })),
        etag: sha(words(3)),
        next_page: `https://api.example.com/v1/orders?cursor=${id(24)}&limit=50`,
      }),
    html: () =>
      `<!doctype html><html><head><title>${words(4)}</title><meta name="csrf" content="${id(32)}"></head><body><h1>${words(3)}</h1>` +
      `<p>${words(40)}</p><a href="/docs/${id(6)}?ref=${id(12)}">${words(2)}</a><img src="data:image/png;base64,${Buffer.from(words(30)).toString("base64")}" alt="${words(2)}">` +
      `<script nonce="${id(22)}">window.__state = ${JSON.stringify({ build: sha(id(5)).slice(0, 12), user: uuid() })}</script></body></html>`,
    markdown: () =>
      `# ${words(4)}\n\n${words(60)}\n\n- ${words(8)}\n- ${words(8)}\n\n| id | hash |\n| --- | --- |\n| ${uuid()} | ${sha(id(9))} |\n\n[${words(2)}](https://example.org/${id(10)})\n`,
    code: () =>
      `export function ${pick(WORDS)}${id(4)}(input: string): string {\n  // ${words(10)}\n  const key = "${pick(WORDS)}_${id(6)}";\n  return input.replace(/${pick(WORDS)}/g, "${words(2)}") + key;\n}\n` +
      `const digest = "${sha(words(5))}"; // sha256\nconst build = ${Math.floor(next() * 1e9)};\n`,
    base64: () =>
      Buffer.from(`${words(80)} ${uuid()} ${Math.floor(next() * 1e12)}`)
        .toString(pick(["base64", "base64url"] as const))
        .replace(/(.{76})/g, "$1\n"),
    hashes: () => Array.from({ length: 12 }, () => `${sha(id(12))}  ${pick(WORDS)}-${id(4)}.tar.gz`).join("\n"),
    uuids: () => Array.from({ length: 20 }, () => `${uuid()},${pick(WORDS)},${Math.floor(next() * 1e6)}`).join("\n"),
    hex: () =>
      Buffer.from(words(50))
        .toString("hex")
        .replace(/(.{64})/g, "$1\n"),
  };
  const results: OrdinaryResult[] = [];
  let size = 0;
  const kinds = Object.keys(makers);
  for (let i = 0; size < bytes; i++) {
    const kind = kinds[i % kinds.length]!;
    const text = makers[kind]!();
    results.push({ kind, text });
    size += text.length;
  }
  return results;
}

/** Secrets of the shapes credentials have (random, 20–48 characters), from a seed of their own. */
export function randomSecrets(count: number, seed = 7): string[] {
  const next = random(seed);
  const alphabets = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "0123456789abcdef",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./+",
  ];
  return Array.from({ length: count }, (_, i) => {
    const alphabet = alphabets[i % alphabets.length]!;
    const length = 20 + Math.floor(next() * 29);
    return Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
  });
}
