import type { JsonValue } from "@tapedeck/protocol";

/**
 * RFC 6901 JSON Pointers over a tool call's arguments: the one language approval rules (a
 * toolset's and direct tools'), `sensitiveParams`, summary templates and error envelopes use to
 * name a part of them (`/path`, `/headers/authorization`, `/items/0`, `/a~1b` for the key `a/b`,
 * `""` for the whole value).
 *
 * Invariants:
 * - Parsing is total (`parsePointer`): a malformed pointer is a `problem`, never an exception,
 *   and it is parsed once, at definition time; reading and replacing never throw.
 * - `~1` is `/` and `~0` is `~`, decoded in that order (RFC 6901 §4); any other `~` is an error.
 * - Pointers longer than `MAX_POINTER_LENGTH` are refused: argument paths are short, and this
 *   bounds the work of a rule.
 * - Array tokens are canonical decimal indexes (`0`, `12`; not `01`, not `-`): the same pointer
 *   never names two places, so a rule cannot be dodged by spelling an index another way.
 * - Keys are looked up as own properties only: `/__proto__` or `/constructor` name a key of the
 *   arguments, never something inherited.
 */

/** A pointer parsed into its reference tokens, or what is wrong with it. */
export type ParsedPointer = { readonly ok: true; readonly tokens: readonly string[] } | { readonly ok: false; readonly problem: string };

/** Pointers longer than this are refused: argument paths are short, and this bounds the work of a rule. */
export const MAX_POINTER_LENGTH = 1024;

/** The reference tokens of `pointer`, or what is wrong with it (a sentence naming the pointer). `""` is the whole value. */
export function parsePointer(pointer: string): ParsedPointer {
  if (pointer === "") return { ok: true, tokens: [] };
  const named = `the JSON pointer ${JSON.stringify(pointer.length > 40 ? `${pointer.slice(0, 40)}…` : pointer)}`;
  if (pointer.length > MAX_POINTER_LENGTH) return { ok: false, problem: `${named} is longer than ${MAX_POINTER_LENGTH} characters` };
  if (!pointer.startsWith("/")) return { ok: false, problem: `${named} must start with "/" (or be "" for the whole value)` };
  if (/~(?![01])/.test(pointer)) return { ok: false, problem: `${named} has a "~" not followed by 0 or 1 (write "~0" for "~" and "~1" for "/")` };
  return { ok: true, tokens: pointer.slice(1).split("/").map(unescapeToken) };
}

function unescapeToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** The pointer that `tokens` parse from (the inverse of `parsePointer`), for messages. */
export function formatPointer(tokens: readonly string[]): string {
  return tokens.map((token) => `/${token.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** What a pointer finds: the value, or nothing (a missing key, an index out of range, a step into a scalar). */
export type PointerValue = { readonly found: true; readonly value: JsonValue } | { readonly found: false };

const ABSENT: PointerValue = { found: false };

/** The value at `tokens` inside `value`, or that there is none. */
export function readPointer(value: JsonValue, tokens: readonly string[]): PointerValue {
  let current: JsonValue = value;
  for (const token of tokens) {
    const next = child(current, token);
    if (next === undefined) return ABSENT;
    current = next;
  }
  return { found: true, value: current };
}

/**
 * A copy of `value` with the value at `tokens` replaced by `replace(old)`; `value` itself when
 * there is nothing at `tokens`. Only the objects and arrays on the way are copied.
 */
export function replaceAt(value: JsonValue, tokens: readonly string[], replace: (old: JsonValue) => JsonValue): JsonValue {
  if (tokens.length === 0) return replace(value);
  const [token, ...rest] = tokens as [string, ...string[]];
  const old = child(value, token);
  if (old === undefined) return value;
  const updated = replaceAt(old, rest, replace);
  if (updated === old) return value;
  if (Array.isArray(value)) return value.map((item, index) => (index === Number(token) ? updated : item));
  // fromEntries defines properties (never assigns them), so a "__proto__" key stays a key.
  return Object.fromEntries(Object.entries(value as { [key: string]: JsonValue }).map(([key, item]) => [key, key === token ? updated : item]));
}

/** RFC 6901: an index is "0" or digits without a leading zero. */
const INDEX = /^(0|[1-9][0-9]*)$/;

function child(value: JsonValue, token: string): JsonValue | undefined {
  if (Array.isArray(value)) return INDEX.test(token) ? value[Number(token)] : undefined;
  if (value === null || typeof value !== "object") return undefined;
  return Object.hasOwn(value, token) ? value[token] : undefined;
}
