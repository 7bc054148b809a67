import type { JsonValue } from "@tapedeck/protocol";

/**
 * RFC 6901 JSON Pointers over a tool's arguments: the language approval rules and
 * `sensitiveParams` use to name a part of them (`/path`, `/headers/authorization`, `/items/0`).
 *
 * Invariants:
 * - A pointer is parsed once, at definition time (`parsePointer`); evaluation never throws.
 * - `~1` is `/` and `~0` is `~`, decoded in that order (RFC 6901 §4); any other `~` is an error.
 * - Array tokens are canonical decimal indexes (`0`, `12`; not `01`, not `-`): the same pointer
 *   never names two places, so a rule cannot be dodged by spelling an index another way.
 * - Keys are looked up as own properties only: `/__proto__` or `/constructor` name a key of the
 *   arguments, never something inherited.
 */

export type PointerParse = { readonly ok: true; readonly tokens: readonly string[] } | { readonly ok: false; readonly problem: string };

/** The reference tokens of `pointer`, or what is wrong with it. `""` is the whole value. */
export function parsePointer(pointer: string): PointerParse {
  if (pointer === "") return { ok: true, tokens: [] };
  if (!pointer.startsWith("/")) return { ok: false, problem: `the JSON pointer "${pointer}" must start with "/" (or be "" for the whole value)` };
  const tokens: string[] = [];
  for (const raw of pointer.slice(1).split("/")) {
    if (/~[^01]|~$/.test(raw)) return { ok: false, problem: `the JSON pointer "${pointer}" has a "~" that is not "~0" or "~1"` };
    tokens.push(raw.replaceAll("~1", "/").replaceAll("~0", "~"));
  }
  return { ok: true, tokens };
}

/** The value at `tokens` inside `value`, or `undefined` when there is none. */
export function valueAt(value: JsonValue, tokens: readonly string[]): JsonValue | undefined {
  let current: JsonValue = value;
  for (const token of tokens) {
    const next = child(current, token);
    if (next === undefined) return undefined;
    current = next;
  }
  return current;
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

const INDEX = /^(0|[1-9][0-9]*)$/;

function child(value: JsonValue, token: string): JsonValue | undefined {
  if (Array.isArray(value)) return INDEX.test(token) ? value[Number(token)] : undefined;
  if (value === null || typeof value !== "object") return undefined;
  return Object.prototype.hasOwnProperty.call(value, token) ? value[token] : undefined;
}
