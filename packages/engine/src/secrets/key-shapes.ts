/**
 * Finds well-known secret shapes in text: API keys and tokens whose form gives them away.
 *
 * Invariant: time linear in the input, whatever it holds. There is no regular expression here:
 * one pass looks at each position once; a shape is tried only where a token can start (after a
 * character that cannot be part of one), and its body scan stays inside the run of token
 * characters that starts there, so the body scans of all positions together cover each
 * character a bounded number of times. A PEM block's end marker is searched for once per block
 * end, never again from each begin marker.
 *
 * Shapes (each the whole token, at a token boundary):
 * - OpenAI `sk-…` / `sk-proj-…` (20+ characters with digits, upper and lower case letters);
 *   Anthropic `sk-ant-…` (32+);
 * - AWS access key ids `AKIA…` / `ASIA…` (exactly 16 more of [A-Z0-9]); AWS secret access keys
 *   (40 of base64) right after an `aws_secret_access_key` / `SecretAccessKey` / … keyword;
 * - GitHub `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` (30+ alphanumerics), `github_pat_` (20+);
 * - Stripe `sk_live_`, `sk_test_`, `rk_live_`, `rk_test_` (10+), `whsec_` (20+);
 * - Slack `xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-` (10+);
 * - Google API keys `AIza` + exactly 35 of [A-Za-z0-9_-];
 * - PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` to its END line, or to the end of
 *   its base64 body when the END line is missing);
 * - JWTs (`eyJ….eyJ….…`, three or more base64url segments);
 * - `Bearer <token>` (the token: 16+ characters, not only lower-case letters).
 */

export interface KeyMatch {
  /** Offsets of the secret in the text (end exclusive). */
  readonly start: number;
  readonly end: number;
  /** What it is, for the redaction marker: "github token". */
  readonly label: string;
}

// Character classes as bit flags over ASCII.
const WORD = 1; // [A-Za-z0-9_-]: characters of a token
const ALNUM = 2; // [A-Za-z0-9]
const UPPER_DIGIT = 4; // [A-Z0-9]
const B64 = 8; // [A-Za-z0-9+/]
const B64TOKEN = 16; // RFC 6750 b64token: [A-Za-z0-9-._~+/]
const PEM_BODY = 32; // [A-Za-z0-9+/=] and white space, ':' ',' '-' (Proc-Type headers)

const CLASSES = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  const upper = ch >= "A" && ch <= "Z";
  const lower = ch >= "a" && ch <= "z";
  const digit = ch >= "0" && ch <= "9";
  let flags = 0;
  if (upper || lower || digit) flags |= WORD | ALNUM | B64 | B64TOKEN | PEM_BODY;
  if (upper || digit) flags |= UPPER_DIGIT;
  if (ch === "_" || ch === "-") flags |= WORD;
  if (ch === "+" || ch === "/") flags |= B64 | B64TOKEN | PEM_BODY;
  if (ch === "-" || ch === "." || ch === "_" || ch === "~") flags |= B64TOKEN;
  if ("=\r\n\t :,-".includes(ch)) flags |= PEM_BODY;
  CLASSES[c] = flags;
}

function has(text: string, i: number, flag: number): boolean {
  const c = text.charCodeAt(i);
  return c < 128 && (CLASSES[c]! & flag) !== 0;
}

/** End of the run of `flag` characters starting at `from`, looking at most `max` characters. */
function runEnd(text: string, from: number, flag: number, max = Infinity): number {
  const limit = Math.min(text.length, from + max);
  let j = from;
  while (j < limit && has(text, j, flag)) j++;
  return j;
}

/** `text.indexOf(needle, from)` if it starts within `within` characters of `from`, else -1. */
function indexWithin(text: string, needle: string, from: number, within: number): number {
  const limit = Math.min(text.length - needle.length, from + within);
  for (let k = from; k <= limit; k++) if (text.startsWith(needle, k)) return k;
  return -1;
}

/** `text` at `i` starts with `word`, compared case-insensitively (ASCII). */
function startsWithFolded(text: string, i: number, word: string): boolean {
  if (i + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    if ((text.charCodeAt(i + k) | 0x20) !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** Counts the kinds of characters of text[from, to): for telling a random key from a word. */
function mixed(text: string, from: number, to: number): boolean {
  let digit = false;
  let upper = false;
  let lower = false;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c >= 48 && c <= 57) digit = true;
    else if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
  }
  return digit && upper && lower;
}

type Matcher = (text: string, i: number) => KeyMatch | undefined;

/** A token `prefix` + a run of `flag` characters of at least `min` (and, if given, exactly `exact`) characters. */
function prefixed(prefix: string, flag: number, label: string, min: number, exact?: number): Matcher {
  return (text, i) => {
    if (!text.startsWith(prefix, i)) return undefined;
    const bodyStart = i + prefix.length;
    // An exact length needs one character more to know the run ends there.
    const end = runEnd(text, bodyStart, flag, exact === undefined ? Infinity : exact + 1);
    const length = end - bodyStart;
    // The token must end where its body ends: "AKIA" + 16 inside a longer word is not a key id.
    if (length < min || (exact !== undefined && length !== exact) || (end < text.length && has(text, end, WORD))) return undefined;
    return { start: i, end, label };
  };
}

const GITHUB = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].map((p) => prefixed(p, ALNUM, "github token", 30));
const GITHUB_PAT = prefixed("github_pat_", ALNUM | WORD, "github token", 20);
const STRIPE = ["sk_live_", "sk_test_", "rk_live_", "rk_test_"].map((p) => prefixed(p, ALNUM, "stripe key", 10));
const STRIPE_WEBHOOK = prefixed("whsec_", ALNUM, "stripe webhook secret", 20);
const SLACK = ["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"].map((p) => prefixed(p, WORD, "slack token", 10));
const GOOGLE = prefixed("AIza", WORD, "google api key", 35, 35);
const AWS_KEY_ID = ["AKIA", "ASIA"].map((p) => prefixed(p, UPPER_DIGIT, "aws access key id", 16, 16));

function openAiOrAnthropic(text: string, i: number): KeyMatch | undefined {
  if (!text.startsWith("sk-", i)) return undefined;
  const end = runEnd(text, i + 3, WORD);
  if (text.startsWith("sk-ant-", i)) return end - (i + 7) >= 32 ? { start: i, end, label: "anthropic api key" } : undefined;
  // "sk-learn-models" is a word, not a key: a key's random body mixes digits and both cases.
  return end - (i + 3) >= 20 && mixed(text, i + 3, end) ? { start: i, end, label: "openai api key" } : undefined;
}

function jwt(text: string, i: number): KeyMatch | undefined {
  if (!text.startsWith("eyJ", i) || (i > 0 && text.charCodeAt(i - 1) === 46)) return undefined;
  let end = runEnd(text, i, WORD);
  if (end - i < 10 || text.charCodeAt(end) !== 46 || !text.startsWith("eyJ", end + 1)) return undefined;
  const payloadEnd = runEnd(text, end + 1, WORD);
  if (payloadEnd - (end + 1) < 10 || text.charCodeAt(payloadEnd) !== 46) return undefined;
  end = runEnd(text, payloadEnd + 1, WORD);
  // A JWE has five segments: take every further one.
  while (text.charCodeAt(end) === 46 && end + 1 < text.length && has(text, end + 1, WORD)) end = runEnd(text, end + 1, WORD);
  return { start: i, end, label: "jwt" };
}

function bearer(text: string, i: number): KeyMatch | undefined {
  if (!startsWithFolded(text, i, "bearer")) return undefined;
  let start = i + 6;
  const afterWord = start;
  while (start < text.length && (text.charCodeAt(start) === 32 || text.charCodeAt(start) === 9)) start++;
  if (start === afterWord) return undefined;
  let end = runEnd(text, start, B64TOKEN);
  while (end < text.length && text.charCodeAt(end) === 61) end++; // trailing '='
  if (end - start < 16) return undefined;
  let allLower = true;
  for (let k = start; k < end && allLower; k++) {
    const c = text.charCodeAt(k);
    allLower = c >= 97 && c <= 122;
  }
  return allLower ? undefined : { start, end, label: "bearer token" };
}

/** `aws_secret_access_key = <40 base64>`, `"SecretAccessKey": "<40 base64>"`, …: only the value is redacted. */
function awsSecret(text: string, i: number): KeyMatch | undefined {
  let k = i;
  let aws = false;
  if (startsWithFolded(text, k, "aws")) {
    aws = true;
    k += 3;
    if (text[k] === "_" || text[k] === "-" || text[k] === ".") k++;
  }
  if (!startsWithFolded(text, k, "secret")) return undefined;
  k += 6;
  if (text[k] === "_" || text[k] === "-") k++;
  if (startsWithFolded(text, k, "access")) {
    k += 6;
    if (text[k] === "_" || text[k] === "-") k++;
  } else if (!aws) {
    return undefined;
  }
  if (!startsWithFolded(text, k, "key")) return undefined;
  k += 3;
  if (k < text.length && has(text, k, WORD)) return undefined;
  // At most a few separators between the keyword and the value: `": "`, ` = `, `='`.
  const limit = Math.min(text.length, k + 8);
  while (k < limit && (text[k] === " " || text[k] === "\t" || text[k] === '"' || text[k] === "'" || text[k] === ":" || text[k] === "=")) k++;
  const end = runEnd(text, k, B64, 41);
  if (end - k !== 40 || (end < text.length && (has(text, end, B64 | WORD) || text[end] === "="))) return undefined;
  return { start: k, end, label: "aws secret access key" };
}

/** An END line farther than this from its BEGIN belongs to something else: an 8192-bit RSA key is ~6.5 KB. */
const PEM_MAX_CHARS = 16 * 1024;

/** A PEM private key block, from its BEGIN line. `endMarker` finds the next END line at or after an offset. */
function pem(text: string, i: number, endMarker: (from: number) => number): KeyMatch | undefined {
  if (!text.startsWith("-----BEGIN ", i)) return undefined;
  const labelStart = i + 11;
  const labelEnd = indexWithin(text, "-----", labelStart, 40);
  if (labelEnd < 0) return undefined;
  const label = text.slice(labelStart, labelEnd);
  if (!/^[A-Z0-9 ]*PRIVATE KEY( BLOCK)?$/.test(label)) return undefined;
  const end = endMarker(labelEnd + 5);
  if (end >= 0 && end - i <= PEM_MAX_CHARS) {
    const close = indexWithin(text, "-----", end + 9, 50);
    if (close >= 0) return { start: i, end: close + 5, label: "private key" };
  }
  // No END line (a cut response): the body is still the key.
  return { start: i, end: runEnd(text, labelEnd + 5, PEM_BODY), label: "private key" };
}

/** Every shape found in `text`, in order, not overlapping. */
export function findKeyShapes(text: string): KeyMatch[] {
  const found: KeyMatch[] = [];
  // The next "-----END " found so far: searched again only once the scan is past it, so the
  // searches cover disjoint stretches of the text. -1: there is none (then none later either).
  let pemEnd = -2;
  const endMarker = (from: number): number => {
    if (pemEnd === -2 || (pemEnd >= 0 && pemEnd < from)) pemEnd = text.indexOf("-----END ", from);
    return pemEnd;
  };
  let i = 0;
  // Right after a match is a boundary too: there the marker (ending in "]") will be, and the
  // same text scanned again after redaction must find nothing new.
  let lastEnd = -1;
  while (i < text.length) {
    const match = i === 0 || i === lastEnd || !has(text, i - 1, WORD) ? matchAt(text, i, endMarker) : undefined;
    if (match) {
      found.push(match);
      i = lastEnd = Math.max(match.end, i + 1);
    } else {
      i++;
    }
  }
  return found;
}

function matchAt(text: string, i: number, endMarker: (from: number) => number): KeyMatch | undefined {
  switch (text[i]) {
    case "s":
      return openAiOrAnthropic(text, i) ?? first(STRIPE, text, i) ?? awsSecret(text, i);
    case "S":
      return awsSecret(text, i);
    case "r":
      return first(STRIPE, text, i);
    case "w":
      return STRIPE_WEBHOOK(text, i);
    case "g":
      return first(GITHUB, text, i) ?? GITHUB_PAT(text, i);
    case "x":
      return first(SLACK, text, i);
    case "A":
      return first(AWS_KEY_ID, text, i) ?? GOOGLE(text, i) ?? awsSecret(text, i);
    case "a":
      return awsSecret(text, i);
    case "e":
      return jwt(text, i);
    case "b":
    case "B":
      return bearer(text, i);
    case "-":
      return pem(text, i, endMarker);
    default:
      return undefined;
  }
}

function first(matchers: readonly Matcher[], text: string, i: number): KeyMatch | undefined {
  for (const matcher of matchers) {
    const match = matcher(text, i);
    if (match) return match;
  }
  return undefined;
}
