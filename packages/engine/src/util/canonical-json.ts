import canonicalize from "canonicalize";
import type { JsonValue } from "@tapedeck/protocol";

/**
 * RFC 8785 canonical JSON: sorted keys, no whitespace, ECMAScript number formatting. Two
 * values with the same meaning have the same text, so it is what ids hash and what replay
 * compares.
 */
export function canonicalJson(value: JsonValue): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/** The value rebuilt from its canonical text: keys in canonical order. */
export function canonicalValue(value: JsonValue): JsonValue {
  return JSON.parse(canonicalJson(value)) as JsonValue;
}
