/**
 * Bounds on the text a model reads: every agent tool result goes into its context, so each part
 * of it has a limit, and whatever is cut says so with one marker, `[… N more characters cut]`.
 */
import { OUTPUT_PAGE, type JsonValue } from "@tapedeck/protocol";

/**
 * The most of a run's output one result holds: seed 001's 256 KiB, counted in UTF-8 bytes of the
 * output's JSON text (what a model's context and an API's limits count). Offsets into the output
 * stay in characters (UTF-16 code units), as the server's output pages count them.
 */
export const DEFAULT_OUTPUT_LIMIT = OUTPUT_PAGE.default;

/** Room for everything around the output (status, logs, trace, hints): each part has its own, smaller limit. */
export const TEXT_OVERHEAD_CHARS = 64 * 1024;

/** The longest marker: "[… " + 16 digits + " more characters cut]". Reserved so a cut text stays within its limit. */
const MARKER_MAX = 40;

/** The marker that stands for text left out. */
export function cutMarker(count: number, unit = "characters"): string {
  return `[… ${count} more ${unit} cut]`;
}

/** `text` if it fits in `limit` characters; else its start and the marker, `limit` characters at most. */
export function bound(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = Math.max(0, limit - MARKER_MAX);
  // Never split a surrogate pair: half a character would render as garbage.
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return `${text.slice(0, end)}${cutMarker(text.length - end)}`;
}

/** A value as compact JSON, cut at `limit` characters: for arguments and results in a trace. */
export function summarize(value: JsonValue | undefined, limit: number): string {
  return bound(value === undefined ? "undefined" : JSON.stringify(value), limit);
}

/** A time as the model reads it: ISO 8601, UTC. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * At most `max` items of `items`, the last ones when `keep` is `"last"`, and the marker line
 * that says how many were left out (`""` when none were).
 */
export function boundList<T>(items: readonly T[], max: number, keep: "first" | "last", unit: string): { readonly items: readonly T[]; readonly cut: string } {
  if (items.length <= max) return { items, cut: "" };
  const kept = keep === "first" ? items.slice(0, max) : items.slice(items.length - max);
  return { items: kept, cut: cutMarker(items.length - max, unit) };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
