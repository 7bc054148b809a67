import type { JsonValue } from "@tapedeck/protocol";
import { mapMcpResult, type McpCallResult } from "../sources/mcp/mcp-result.js";

/**
 * What the model gets back from a direct tool call, before it is shaped for one model API
 * (`result-blocks.ts`): text and images with their MIME type, whether it is an error, and
 * whether parts were left out (lossy; each such part is a one-line description saying so).
 *
 * Invariant: the content is a function of the call's journaled outcome only. An MCP result is
 * read through `mapMcpResult`, the very mapping whose value the journal records, so a tool call
 * answered from the journal (handled twice, or after a restart) gives the model the same
 * content as the first time.
 */

export type ModelPart =
  /** Text, never empty. */
  | { readonly type: "text"; readonly text: string }
  /** An image, base64, with its MIME type. */
  | { readonly type: "image"; readonly mimeType: string; readonly data: string };

export interface ModelContent {
  readonly parts: readonly ModelPart[];
  /** The call failed or the tool said it did: the model APIs' `is_error`. */
  readonly isError: boolean;
  /** Present (true) when some part was described in one line instead of kept. */
  readonly lossy?: true;
}

/** Said instead of nothing: model APIs refuse an empty text block. */
export const EMPTY_RESULT_TEXT = "(the tool returned an empty result)";

/** The content of a tool's successful outcome as the journal records it (a string, `{ content, lossy? }`, or any JSON). */
export function contentOfValue(value: JsonValue): ModelContent {
  if (typeof value === "string") return { parts: [textPart(value)], isError: false };
  const blocks = contentBlocks(value);
  if (blocks !== undefined)
    return { parts: blocks.parts.length > 0 ? blocks.parts : [textPart("")], isError: false, ...(blocks.lossy ? { lossy: true as const } : {}) };
  return { parts: [textPart(value === null ? "" : JSON.stringify(value, null, 2))], isError: false };
}

/** The content of an MCP `tools/call` result, by way of the value the journal records for it. */
export function contentOfMcpResult(result: McpCallResult): ModelContent {
  const mapped = mapMcpResult(result);
  if (mapped.ok) return contentOfValue(mapped.value);
  return { parts: [textPart(mapped.failure.message)], isError: true };
}

/** A text part; empty text becomes `EMPTY_RESULT_TEXT`. */
export function textPart(text: string): ModelPart {
  return { type: "text", text: text === "" ? EMPTY_RESULT_TEXT : text };
}

/**
 * The parts of `{ content: [...], lossy?: true }` as `mapMcpResult` writes it (strings and
 * `{ type: "image", mimeType, data }`), or `undefined` for a value of any other shape (a host
 * tool's own object that merely has a `content` key is JSON, not content).
 */
function contentBlocks(value: JsonValue): { parts: ModelPart[]; lossy: boolean } | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (!Array.isArray(value.content) || keys.some((k) => k !== "content" && k !== "lossy") || (value.lossy !== undefined && value.lossy !== true))
    return undefined;
  const parts: ModelPart[] = [];
  for (const item of value.content) {
    if (typeof item === "string") {
      if (item !== "") parts.push({ type: "text", text: item });
    } else if (isImage(item)) {
      parts.push({ type: "image", mimeType: item.mimeType, data: item.data });
    } else {
      return undefined;
    }
  }
  return { parts, lossy: value.lossy === true };
}

function isImage(item: JsonValue): item is { type: "image"; mimeType: string; data: string } {
  return (
    typeof item === "object" &&
    item !== null &&
    !Array.isArray(item) &&
    item.type === "image" &&
    typeof item.mimeType === "string" &&
    typeof item.data === "string" &&
    Object.keys(item).length === 3
  );
}

/** All text of `content`, images described in one line each: for APIs that take text only, and for budgets. */
export function contentText(content: ModelContent, describeImage: (part: Extract<ModelPart, { type: "image" }>) => string = imageLine): string {
  return content.parts.map((part) => (part.type === "text" ? part.text : describeImage(part))).join("\n");
}

/** `[image image/png, 3 KB]`: an image described where it cannot be shown. */
export function imageLine(part: Extract<ModelPart, { type: "image" }>, why = "not shown"): string {
  const padding = part.data.endsWith("==") ? 2 : part.data.endsWith("=") ? 1 : 0;
  const bytes = Math.floor((part.data.length * 3) / 4) - padding;
  return `[image ${part.mimeType}, ${bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`} — ${why}]`;
}
