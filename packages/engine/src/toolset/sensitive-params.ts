import { createHmac } from "node:crypto";
import type { JsonValue } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import { parsePointer, replaceAt } from "./json-pointer.js";

/**
 * `sensitiveParams`: parts of a tool's arguments (JSON pointers) that must not be written where
 * people and logs read — the journal, traces, webhooks, cassettes, the console. Each is replaced
 * by a keyed hash of its value, so that replay can still compare a call's arguments with the
 * recorded ones (the same value gives the same marker) while nobody without the key can test a
 * guess against the marker.
 *
 * Invariants:
 * - The marker depends only on the key and the value's canonical JSON (RFC 8785): `{"a":1,"b":2}`
 *   and `{"b":2,"a":1}` give the same marker.
 * - A pointer that names nothing in these arguments changes nothing; the arguments are never
 *   mutated (a copy is made along each redacted path).
 * - The key is the engine's (derived from its vault key when wired): never a constant, or the
 *   hash of a short secret could be found by trying values.
 */

/** What a redacted value becomes: `"[redacted hmac-sha256:<32 hex>]"`. */
export const REDACTED_PREFIX = "[redacted hmac-sha256:";

/** Pointers that do not parse, each with the problem: checked when a tool is defined. */
export function sensitiveParamsProblems(pointers: readonly string[]): readonly string[] {
  return pointers.flatMap((pointer, index) => {
    const parsed = parsePointer(pointer);
    if (!parsed.ok) return [`sensitiveParams[${index}]: ${parsed.problem}`];
    return parsed.tokens.length === 0 ? [`sensitiveParams[${index}]: "" would redact all the arguments; name the parts that are secret`] : [];
  });
}

/** `args` with the value at each of `pointers` replaced by its marker. Malformed pointers are skipped (see `sensitiveParamsProblems`). */
export function redactSensitive(args: JsonValue, pointers: readonly string[], key: Uint8Array): JsonValue {
  let redacted = args;
  for (const pointer of pointers) {
    const parsed = parsePointer(pointer);
    if (parsed.ok && parsed.tokens.length > 0) redacted = replaceAt(redacted, parsed.tokens, (value) => marker(value, key));
  }
  return redacted;
}

function marker(value: JsonValue, key: Uint8Array): string {
  // A value redacted already (arguments redacted twice) keeps its marker.
  if (typeof value === "string" && value.startsWith(REDACTED_PREFIX)) return value;
  const digest = createHmac("sha256", key).update(canonicalJson(value)).digest("hex").slice(0, 32);
  return `${REDACTED_PREFIX}${digest}]`;
}
