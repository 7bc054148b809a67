import type { JsonValue } from "@tapedeck/protocol";

/**
 * JSON Pointers (RFC 6901) into a tool call's arguments, as approval rules, summary templates
 * and error envelopes name the values they read: `/tool_name`, `/params/0`, `/a~1b` (the key
 * `a/b`), `""` (the whole value).
 *
 * Invariants: parsing is total (a malformed pointer is a `problem`, never an exception); reading
 * only follows own keys of objects and indices of arrays, so `/__proto__` or `/constructor` of
 * arguments that do not have those keys is absent, never something inherited.
 */

/** A pointer parsed into its reference tokens, or what is wrong with it. */
export type ParsedPointer = { readonly ok: true; readonly tokens: readonly string[] } | { readonly ok: false; readonly problem: string };

/** Pointers longer than this are refused: argument paths are short, and this bounds the work of a rule. */
export const MAX_POINTER_LENGTH = 1024;

export function parsePointer(pointer: string): ParsedPointer {
  if (pointer === "") return { ok: true, tokens: [] };
  if (pointer.length > MAX_POINTER_LENGTH) return { ok: false, problem: `is longer than ${MAX_POINTER_LENGTH} characters` };
  if (!pointer.startsWith("/"))
    return { ok: false, problem: `must start with "/" (a JSON Pointer, e.g. "/tool_name"), not ${JSON.stringify(pointer.slice(0, 20))}` };
  if (/~(?![01])/.test(pointer)) return { ok: false, problem: 'has a "~" not followed by 0 or 1 (write "~0" for "~" and "~1" for "/")' };
  return { ok: true, tokens: pointer.slice(1).split("/").map(unescapeToken) };
}

function unescapeToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** What a pointer finds: the value, or nothing (a missing key, an index out of range, a step into a scalar). */
export type PointerValue = { readonly found: true; readonly value: JsonValue } | { readonly found: false };

const ABSENT: PointerValue = { found: false };

export function readPointer(value: JsonValue, tokens: readonly string[]): PointerValue {
  let current: JsonValue = value;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      // RFC 6901: an index is "0" or digits without a leading zero.
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return ABSENT;
      const index = Number(token);
      if (index >= current.length) return ABSENT;
      current = current[index]!;
    } else if (typeof current === "object" && current !== null) {
      if (!Object.hasOwn(current, token)) return ABSENT;
      current = current[token]!;
    } else {
      return ABSENT;
    }
  }
  return { found: true, value: current };
}
