import type { JsonValue } from "@tapedeck/protocol";
import type { ErrorEnvelope } from "./direct-options.js";
import { parsePointer, readPointer } from "../toolset/json-pointer.js";
import type { ModelContent } from "./model-content.js";

/**
 * Business errors in successful results (seed 002): some servers answer a failed operation with
 * a successful MCP result whose JSON says `{"code": 40001, "message": "..."}`. With an
 * `errorEnvelope` (`{ code: "/code", message: "/message" }`) such a result becomes an `isError`
 * result: the original text kept, and one line `Upstream error <code>: <message>` after it, so
 * that the model, retries, policies and observers all see a failure.
 *
 * Invariant: only a non-zero number (or a string holding one) at the code's pointer is an error;
 * a result that is not JSON, has no code, or has code 0 is left as it is.
 */

export interface BusinessError {
  readonly code: number | string;
  readonly message: string;
}

/** The business error a journaled value reports: the value itself, a JSON string, or the JSON text parts of `{ content }`. */
export function businessErrorOf(value: JsonValue, envelope: ErrorEnvelope): BusinessError | undefined {
  if (typeof value === "string") return fromJson(parseJson(value), envelope);
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Array.isArray(value.content)) {
    for (const part of value.content) {
      const found = typeof part === "string" ? fromJson(parseJson(part), envelope) : undefined;
      if (found !== undefined) return found;
    }
  }
  return fromJson(value, envelope);
}

/** `content` as an `isError` result when one of its text parts reports a business error; as it is otherwise. */
export function withBusinessError(content: ModelContent, envelope: ErrorEnvelope | null): ModelContent {
  if (envelope === null || content.isError) return content;
  for (const part of content.parts) {
    if (part.type !== "text") continue;
    const found = fromJson(parseJson(part.text), envelope);
    if (found !== undefined) return { ...content, parts: [...content.parts, { type: "text", text: businessErrorLine(found) }], isError: true };
  }
  return content;
}

export function businessErrorLine(error: BusinessError): string {
  return `Upstream error ${error.code}: ${error.message}`;
}

function fromJson(body: JsonValue | undefined, envelope: ErrorEnvelope): BusinessError | undefined {
  if (body === undefined) return undefined;
  const code = read(body, envelope.code);
  const isError = (typeof code === "number" && code !== 0) || (typeof code === "string" && /^-?\d+$/.test(code) && Number(code) !== 0);
  if (!isError) return undefined;
  const message = read(body, envelope.message);
  return { code: code, message: message === undefined ? "" : typeof message === "string" ? message : JSON.stringify(message) };
}

function read(body: JsonValue, pointer: string): JsonValue | undefined {
  const parsed = parsePointer(pointer);
  if (!parsed.ok) return undefined;
  const found = readPointer(body, parsed.tokens);
  return found.found ? found.value : undefined;
}

/** Results too large to be an error envelope are not parsed: an envelope is a few hundred bytes. */
const MAX_ENVELOPE_TEXT = 64 * 1024;

function parseJson(text: string): JsonValue | undefined {
  const trimmed = text.trimStart();
  if (text.length > MAX_ENVELOPE_TEXT || (!trimmed.startsWith("{") && !trimmed.startsWith("["))) return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
