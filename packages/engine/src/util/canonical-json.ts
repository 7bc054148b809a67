import canonicalize from "canonicalize";
import type { JsonValue } from "@tapedeck/protocol";

/**
 * RFC 8785 canonical JSON: sorted keys, no whitespace, ECMAScript number formatting. Two
 * values with the same meaning have the same text, so it is what ids hash and what replay
 * compares.
 *
 * Every call's arguments pass through here, and most are canonical already (keys in order):
 * for those `JSON.stringify` writes the same text, several times faster than `canonicalize`.
 * Other plain JSON is written here too; only the rest (`toJSON`, cycles, lone surrogates, …)
 * goes to `canonicalize`, the reference implementation.
 */
export function canonicalJson(value: JsonValue): string {
  if (isCanonical(value, 0)) return JSON.stringify(value);
  const text = plainCanonicalJson(value, 0) ?? canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/** The value rebuilt from its canonical text: keys in canonical order (`value` itself when they are already). */
export function canonicalValue(value: JsonValue): JsonValue {
  return isCanonical(value, 0) ? value : (JSON.parse(canonicalJson(value)) as JsonValue);
}

/** Deeper values are left to `canonicalize`, which also detects cycles. */
const MAX_FAST_DEPTH = 64;

/** Any surrogate: `canonicalize` rejects lone ones, which `JSON.stringify` would escape. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * True when `JSON.stringify(value)` is its canonical text: plain JSON only (finite numbers,
 * strings without surrogates, dense arrays, plain objects whose keys are already in code-unit
 * order). Anything else (`toJSON`, holes, `undefined`, …) is left to `canonicalize`.
 */
function isCanonical(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
      return !SURROGATE.test(value);
    case "number":
      return Number.isFinite(value);
    case "boolean":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= MAX_FAST_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || Object.hasOwn(value, "toJSON")) return false;
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isCanonical(value[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  const record = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) return false;
    if ((previous !== undefined && !(previous < key)) || SURROGATE.test(key) || !isCanonical(record[key], depth + 1)) return false;
    previous = key;
  }
  return true;
}

/** The canonical text of plain JSON (as `isCanonical` accepts, keys in any order); `undefined` for anything else. */
function plainCanonicalJson(value: unknown, depth: number): string | undefined {
  if (typeof value !== "object" || value === null) return isCanonical(value, depth) ? JSON.stringify(value) : undefined;
  if (depth >= MAX_FAST_DEPTH) return undefined;
  const parts: string[] = [];
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || Object.hasOwn(value, "toJSON")) return undefined;
    for (let i = 0; i < value.length; i++) {
      const part = i in value ? plainCanonicalJson(value[i], depth + 1) : undefined;
      if (part === undefined) return undefined;
      parts.push(part);
    }
    return `[${parts.join(",")}]`;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record).sort()) {
    const part = SURROGATE.test(key) ? undefined : plainCanonicalJson(record[key], depth + 1);
    if (part === undefined) return undefined;
    parts.push(`${JSON.stringify(key)}:${part}`);
  }
  return `{${parts.join(",")}}`;
}
