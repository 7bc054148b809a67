import type { JsonObject } from "./model-turn.js";

/**
 * Small readers for request bodies the fake did not write. They never throw: a body that does
 * not have the expected shape reads as empty, and the dialect's `check` is what reports it.
 */

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The objects in `value` when it is an array, skipping anything else. */
export function objectsIn(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

/**
 * A message or tool-result content as text: a string as is, content parts joined by newlines
 * (text parts by their text, any other part as `[type]` so a test still sees it was there).
 */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === undefined || content === null) return "";
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content.map(partText).join("\n");
}

function partText(part: unknown): string {
  if (!isJsonObject(part)) return JSON.stringify(part);
  return typeof part.text === "string" ? part.text : `[${String(part.type)}]`;
}

/** A rough token count (four characters a token) so usage grows with what was sent. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return Math.ceil(text.length / 4);
}

/** What is wrong with a required field, or undefined when it has the expected JSON type. */
export function fieldProblem(body: JsonObject, field: string, type: "string" | "number" | "array"): string | undefined {
  const value = body[field];
  const ok = type === "array" ? Array.isArray(value) : typeof value === type;
  return ok ? undefined : `\`${field}\`: expected ${type === "array" ? "an array" : `a ${type}`}, got ${kindOf(value)}`;
}

function kindOf(value: unknown): string {
  if (value === undefined) return "nothing (the field is missing)";
  return Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`;
}
