/**
 * The spellings of a known secret that the leak scanner looks for: the ways a server (or a
 * tool) commonly echoes a value it was sent, transformed. A tool that can make a request with a
 * credential can have any server reflect it in any transformation (a credential grant does not
 * protect against that: `docs/design/credentials.md`); these are the ones found in practice,
 * each cheap to look for with `indexOf`.
 *
 * - as is, and reversed;
 * - URL-encoded (`encodeURIComponent`), every byte percent-encoded (both cases), and twice;
 * - base64 and base64url, whole, and the part that does not depend on where the value starts in
 *   a longer encoded text (each of the three byte alignments: `Basic base64(user:password)`);
 * - hex (both cases), base32 (RFC 4648, both cases, with and without padding);
 * - JSON string escapes (as `JSON.stringify` writes it, with `\/`, and every character as
 *   `\uXXXX`, both cases);
 * - HTML entities: the named escapes of `& < > " '`, and every character as `&#N;` or
 *   `&#xH;` (both cases).
 * Values split across lines or by separators (`s/e/c/r/e/t`) are found by the scanner's compact
 * pass (`leak-scanner.ts`), over the forms here.
 */
export function secretForms(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const reversed = [...value].reverse().join("");
  const forms = new Set<string>([value, reversed]);
  const url = encodeURIComponent(value);
  forms.add(url).add(encodeURIComponent(url));
  const percent = [...bytes].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  forms.add(percent).add(percent.toUpperCase());
  for (const alphabet of ["base64", "base64url"] as const) {
    forms.add(bytes.toString(alphabet));
    for (const shift of [0, 1, 2] as const) forms.add(base64Core(bytes, shift, alphabet));
  }
  const hex = bytes.toString("hex");
  forms.add(hex).add(hex.toUpperCase());
  const base32 = toBase32(bytes);
  const unpadded = base32.replace(/=+$/, "");
  forms.add(base32).add(base32.toLowerCase()).add(unpadded).add(unpadded.toLowerCase());
  const json = JSON.stringify(value).slice(1, -1);
  forms.add(json).add(json.replace(/\//g, "\\/"));
  const units = [...value].flatMap((char) => (char.length === 2 ? [char.charCodeAt(0), char.charCodeAt(1)] : [char.charCodeAt(0)]));
  const unicode = units.map((unit) => `\\u${unit.toString(16).padStart(4, "0")}`).join("");
  forms.add(unicode).add(unicode.replace(/[a-f]/g, (digit) => digit.toUpperCase()));
  forms.add(htmlEscaped(value));
  const points = [...value].map((char) => char.codePointAt(0)!);
  forms.add(points.map((point) => `&#${point};`).join(""));
  const hexEntities = points.map((point) => `&#x${point.toString(16)};`).join("");
  forms.add(hexEntities).add(hexEntities.replace(/[a-f](?=[0-9a-f]*;)/g, (digit) => digit.toUpperCase()));
  return [...forms];
}

/**
 * The characters of `bytes`' base64 that are the same wherever the bytes start within a longer
 * encoded text, at `shift` bytes past a 3-byte boundary: the first characters mix in the bytes
 * before (2 of them at shift 1, 3 at shift 2), and the last one the bytes after unless the
 * value ends on a boundary.
 */
function base64Core(bytes: Buffer, shift: 0 | 1 | 2, alphabet: "base64" | "base64url"): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes])
    .toString(alphabet)
    .replace(/=+$/, "");
  const head = [0, 2, 3][shift]!;
  const tail = (shift + bytes.length) % 3 === 0 ? 0 : 1;
  return encoded.slice(head, encoded.length - tail);
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32, padded. */
function toBase32(bytes: Buffer): string {
  let out = "";
  let bits = 0;
  let buffer = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out.padEnd(Math.ceil(out.length / 8) * 8, "=");
}

function htmlEscaped(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
