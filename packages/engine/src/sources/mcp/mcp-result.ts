import { toolFailure, type JsonValue, type ToolFailure } from "@tapedeck/protocol";

/**
 * What a script gets from an MCP `tools/call` result.
 *
 * - `isError` → a failure with code `tool_error` and the server's text (cut past
 *   `MAX_FAILURE_TEXT_CHARS`: a failure is journaled and read by a model, and no size limit
 *   applies to failures downstream).
 * - `structuredContent` → that value, as is.
 * - one text block → the text.
 * - anything else → `{ content: [...] }`: text as strings, images kept with their MIME type
 *   (`{ type: "image", mimeType, data }`), and audio, resource links and binary resources as
 *   one-line descriptions, with `lossy: true` when any part was not kept.
 */
export type McpContentBlock = { readonly type: string; readonly [key: string]: unknown };

export interface McpCallResult {
  readonly content?: readonly McpContentBlock[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
}

export type MappedResult = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly failure: ToolFailure };

/** An MCP tool's error text is cut past this: enough for any explanation, bounded for a hostile server. */
export const MAX_FAILURE_TEXT_CHARS = 16 * 1024;

/** `text` cut to `MAX_FAILURE_TEXT_CHARS`, saying how much was left out. */
export function boundedFailureText(text: string): string {
  if (text.length <= MAX_FAILURE_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_FAILURE_TEXT_CHARS)}… [${text.length - MAX_FAILURE_TEXT_CHARS} more characters not kept]`;
}

export function mapMcpResult(result: McpCallResult): MappedResult {
  const blocks = result.content ?? [];
  if (result.isError) {
    const text = blocks.map((b) => (b.type === "text" ? String(b.text) : describe(b).text)).join("\n");
    return { ok: false, failure: toolFailure("tool_error", boundedFailureText(text || "The tool reported an error without a message.")) };
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return { ok: true, value: result.structuredContent as JsonValue };
  }
  const [only] = blocks;
  if (blocks.length === 1 && only?.type === "text") return { ok: true, value: String(only.text) };
  let lossy = false;
  const content = blocks.map((block) => {
    const mapped = describe(block);
    lossy ||= mapped.lossy;
    return mapped.value;
  });
  return { ok: true, value: lossy ? { content, lossy: true } : { content } };
}

function describe(block: McpContentBlock): { value: JsonValue; text: string; lossy: boolean } {
  switch (block.type) {
    case "text":
      return { value: String(block.text), text: String(block.text), lossy: false };
    case "image":
      return { value: { type: "image", mimeType: String(block.mimeType), data: String(block.data) }, text: `[image ${String(block.mimeType)}]`, lossy: false };
    case "audio":
      return lossyLine(`[audio ${String(block.mimeType)}, ${sizeOf(block.data)} — not kept]`);
    case "resource_link":
      return lossyLine(`[resource link ${String(block.uri)}${typeof block.name === "string" ? ` (${block.name})` : ""}]`);
    case "resource": {
      const resource = (block.resource ?? {}) as { uri?: string; text?: string; blob?: string; mimeType?: string };
      if (typeof resource.text === "string") return { value: resource.text, text: resource.text, lossy: false };
      return lossyLine(`[binary resource ${resource.uri ?? ""}${resource.mimeType ? `, ${resource.mimeType}` : ""}, ${sizeOf(resource.blob)} — not kept]`);
    }
    default:
      return lossyLine(`[${block.type} content — not kept]`);
  }
}

function lossyLine(text: string) {
  return { value: text, text, lossy: true };
}

function sizeOf(base64: unknown): string {
  const bytes = typeof base64 === "string" ? Math.floor((base64.length * 3) / 4) : 0;
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}
