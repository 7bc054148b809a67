import type { JsonValue } from "@tapedeck/protocol";
import { findKeyShapes } from "./key-shapes.js";
import { secretForms } from "./secret-forms.js";

/**
 * Redacts secrets from what tools answer, before the journal or the script sees it: known
 * secret values (credentials the engine holds) and well-known key shapes (`key-shapes.ts`).
 * Each is replaced by a marker saying what was there, `[redacted: github token]`, so a model
 * reading the result knows something was removed and why; nothing is rejected.
 *
 * Invariants:
 * - Time linear in the input: known values are found with `indexOf` in each of their forms
 *   (`secret-forms.ts`: encodings and reversal), then in a compact copy of the text (only its
 *   letters and digits) for values split across lines or by separators; shapes in one pass.
 * - A JSON value keeps its structure: only strings change (object keys too); an object whose
 *   keys collide once redacted keeps every entry (`[redacted: …] (2)`).
 * - What is returned contains no marker-free secret: known values are replaced first (longest
 *   first, so a value containing another goes whole), then shapes; a marker matches no shape.
 * - Nothing changed, nothing copied: a value without secrets comes back as the same object.
 */

/** A secret value the engine knows (a credential), and the name it is redacted under. */
export interface KnownSecret {
  readonly value: string;
  /** Shown in the marker: `[redacted: secret GITHUB_TOKEN]`. Never the value. */
  readonly name?: string;
}

export interface Scanned<T> {
  readonly value: T;
  /** How many secrets were redacted. */
  readonly redactions: number;
}

/**
 * Values shorter than this are not looked for: they would redact ordinary words and numbers.
 * A credential that short is guessable anyway.
 */
export const MIN_KNOWN_SECRET_CHARS = 6;

/**
 * Letters and digits a form must keep, compacted, to be looked for across separators: a short
 * value could be spelt by ordinary words run together ("abc def"); 12 random characters are not.
 */
export const MIN_SPLIT_SECRET_CHARS = 12;

interface Needle {
  readonly text: string;
  readonly marker: string;
}

export class LeakScanner {
  readonly #secrets: readonly KnownSecret[];
  readonly #needles: readonly Needle[];
  /** The needles compacted (`compact`), long enough to be looked for across separators. */
  readonly #splitNeedles: readonly Needle[];

  /** `secrets`: values to redact wherever they appear, in every form of `secretForms`, and split. */
  constructor(secrets: readonly (string | KnownSecret)[] = []) {
    this.#secrets = secrets.map((secret) => (typeof secret === "string" ? { value: secret } : secret)).filter((s) => s.value.length >= MIN_KNOWN_SECRET_CHARS);
    const needles = new Map<string, string>();
    for (const { value, name } of this.#secrets) {
      const marker = `[redacted: secret${name ? ` ${name}` : ""}]`;
      for (const form of secretForms(value)) {
        if (form.length >= MIN_KNOWN_SECRET_CHARS && !needles.has(form)) needles.set(form, marker);
      }
    }
    this.#needles = [...needles].map(([text, marker]) => ({ text, marker })).sort((a, b) => b.text.length - a.text.length);
    const split = new Map<string, string>();
    for (const { text, marker } of this.#needles) {
      const compacted = compact(text);
      if (compacted.length >= MIN_SPLIT_SECRET_CHARS && !split.has(compacted)) split.set(compacted, marker);
    }
    this.#splitNeedles = [...split].map(([text, marker]) => ({ text, marker }));
  }

  /** How many spellings of the known secrets it looks for (the bench reports it). */
  get formCount(): number {
    return this.#needles.length;
  }

  /** A scanner that also knows `secrets` (a run's credentials on top of the engine's). */
  with(secrets: readonly (string | KnownSecret)[]): LeakScanner {
    return new LeakScanner([...this.#secrets, ...secrets]);
  }

  /** `text` with every secret replaced by its marker. */
  scanText(text: string): Scanned<string> {
    let redactions = 0;
    let out = text;
    for (const needle of this.#needles) {
      if (!out.includes(needle.text)) continue;
      const parts = out.split(needle.text);
      redactions += parts.length - 1;
      out = parts.join(needle.marker);
    }
    if (this.#splitNeedles.length > 0) {
      const split = redactSplit(out, this.#splitNeedles);
      out = split.value;
      redactions += split.redactions;
    }
    const shapes = findKeyShapes(out);
    if (shapes.length === 0) return { value: out, redactions };
    let result = "";
    let from = 0;
    for (const shape of shapes) {
      result += out.slice(from, shape.start) + `[redacted: ${shape.label}]`;
      from = shape.end;
    }
    return { value: result + out.slice(from), redactions: redactions + shapes.length };
  }

  /** `value` with every string in it (object keys too) scanned; the same object when nothing was found. */
  scanValue<T extends JsonValue>(value: T): Scanned<T> {
    let redactions = 0;
    const walk = (node: JsonValue): JsonValue => {
      if (typeof node === "string") {
        const scanned = this.scanText(node);
        redactions += scanned.redactions;
        return scanned.value;
      }
      if (typeof node !== "object" || node === null) return node;
      if (Array.isArray(node)) {
        let copy: JsonValue[] | undefined;
        for (let i = 0; i < node.length; i++) {
          const item = walk(node[i]!);
          if (item !== node[i]) (copy ??= node.slice())[i] = item;
        }
        return copy ?? node;
      }
      let changed = false;
      const entries: [string, JsonValue][] = [];
      for (const [key, item] of Object.entries(node)) {
        const scannedKey = this.scanText(key);
        redactions += scannedKey.redactions;
        const scannedItem = walk(item);
        if (scannedKey.value !== key || scannedItem !== item) changed = true;
        entries.push([scannedKey.value, scannedItem]);
      }
      return changed ? objectOf(entries) : node;
    };
    return { value: walk(value) as T, redactions };
  }
}

/** Kept in the compact copy: ASCII letters and digits, and every non-ASCII character. */
function isKept(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code >= 128;
}

/**
 * `text` with only its letters and digits (ASCII, and every non-ASCII character): a value split
 * by newlines, spaces or separators (`s/e/c/r/e/t`, a base64 text wrapped at 76 columns) is
 * whole again in it. Made for every scanned text, so by hand into UTF-16 code units (a regular
 * expression's replace took 2.3× as long).
 */
function compact(text: string): string {
  const units = new Uint16Array(text.length);
  let kept = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isKept(code)) units[kept++] = code;
  }
  return Buffer.from(units.buffer, 0, kept * 2).toString("utf16le");
}

/** Where each character of `compact(text)` is in `text`: made only when something was found. */
function compactPositions(text: string): Uint32Array {
  const from = new Uint32Array(text.length);
  let kept = 0;
  for (let i = 0; i < text.length; i++) if (isKept(text.charCodeAt(i))) from[kept++] = i;
  return from.subarray(0, kept);
}

/** `text` with every `needles` match of its compact copy replaced, from its first character to its last, by its marker. */
function redactSplit(text: string, needles: readonly Needle[]): Scanned<string> {
  const compacted = compact(text);
  const hits: { at: number; length: number; marker: string }[] = [];
  for (const needle of needles) {
    for (let at = compacted.indexOf(needle.text); at >= 0; at = compacted.indexOf(needle.text, at + needle.text.length)) {
      hits.push({ at, length: needle.text.length, marker: needle.marker });
    }
  }
  if (hits.length === 0) return { value: text, redactions: 0 };
  const from = compactPositions(text);
  const found = hits.map((hit) => ({ start: from[hit.at]!, end: from[hit.at + hit.length - 1]! + 1, marker: hit.marker }));
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  let value = "";
  let next = 0;
  let redactions = 0;
  for (const match of found) {
    if (match.start < next) continue;
    value += text.slice(next, match.start) + match.marker;
    next = match.end;
    redactions++;
  }
  return { value: value + text.slice(next), redactions };
}

/** The scanner of the engine: key shapes only, until credentials give it values to know. */
export const SHAPE_SCANNER = new LeakScanner();

/** An object of `entries` in order; a key seen before gets a suffix, so no entry is lost. */
function objectOf(entries: readonly [string, JsonValue][]): JsonValue {
  const object: Record<string, JsonValue> = {};
  for (const [key, item] of entries) {
    let name = key;
    for (let n = 2; Object.hasOwn(object, name); n++) name = `${key} (${n})`;
    // defineProperty: a key "__proto__" stays a plain entry.
    Object.defineProperty(object, name, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return object;
}
