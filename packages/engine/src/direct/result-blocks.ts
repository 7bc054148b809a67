import { contentText, imageLine, type ModelContent, type ModelPart } from "./model-content.js";

/**
 * A direct tool call's content in the shape each model API takes back: Anthropic Messages'
 * `tool_result` block, OpenAI Responses' `function_call_output` item, OpenAI Chat Completions'
 * `{ role: "tool" }` message, and a generic form for any other API.
 *
 * The types are structural (the engine does not depend on the model SDKs); a type test checks
 * each is assignable to the official one (`@anthropic-ai/sdk`, `openai`).
 *
 * Invariants:
 * - Every result has at least one non-empty text part or image (the APIs refuse empty content).
 * - An image the API cannot take becomes a one-line description saying so: Anthropic takes
 *   JPEG, PNG, GIF and WebP; OpenAI Responses the same four; Chat Completions no image in a
 *   tool message at all.
 * - `isError` becomes Anthropic's `is_error`; the other APIs have no such flag, and the text
 *   itself says the call failed (failure texts and `"<tool>" reported an error:` lines do).
 */

/** Image types both APIs take in a tool result. */
const API_IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

export type AnthropicMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

export type AnthropicResultBlock = { type: "text"; text: string } | { type: "image"; source: { type: "base64"; media_type: AnthropicMediaType; data: string } };

/** `Anthropic.Messages.ToolResultBlockParam`. */
export interface AnthropicToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: string | AnthropicResultBlock[];
  is_error?: boolean;
}

export function anthropicToolResult(toolUseId: string, content: ModelContent): AnthropicToolResult {
  const hasImage = content.parts.some((p) => p.type === "image" && API_IMAGE_TYPES.has(p.mimeType));
  const body: AnthropicToolResult["content"] = hasImage
    ? content.parts.map((part): AnthropicResultBlock => (part.type === "text" ? { type: "text", text: part.text } : anthropicImage(part)))
    : contentText(content, unsupportedImage);
  return { type: "tool_result", tool_use_id: toolUseId, content: body, ...(content.isError ? { is_error: true } : {}) };
}

function anthropicImage(part: Extract<ModelPart, { type: "image" }>): AnthropicResultBlock {
  if (!API_IMAGE_TYPES.has(part.mimeType)) return { type: "text", text: unsupportedImage(part) };
  return { type: "image", source: { type: "base64", media_type: part.mimeType as AnthropicMediaType, data: part.data } };
}

export type ResponsesOutputPart = { type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "auto" };

/** `OpenAI.Responses.ResponseInputItem.FunctionCallOutput`. */
export interface ResponsesFunctionCallOutput {
  type: "function_call_output";
  call_id: string;
  output: string | ResponsesOutputPart[];
}

export function responsesFunctionCallOutput(callId: string, content: ModelContent): ResponsesFunctionCallOutput {
  const hasImage = content.parts.some((p) => p.type === "image" && API_IMAGE_TYPES.has(p.mimeType));
  const output: ResponsesFunctionCallOutput["output"] = hasImage
    ? content.parts.map((part): ResponsesOutputPart => {
        if (part.type === "text") return { type: "input_text", text: part.text };
        if (!API_IMAGE_TYPES.has(part.mimeType)) return { type: "input_text", text: unsupportedImage(part) };
        return { type: "input_image", image_url: `data:${part.mimeType};base64,${part.data}`, detail: "auto" };
      })
    : contentText(content, unsupportedImage);
  return { type: "function_call_output", call_id: callId, output };
}

/** `OpenAI.Chat.ChatCompletionToolMessageParam`. */
export interface ChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

export function chatToolMessage(toolCallId: string, content: ModelContent): ChatToolMessage {
  return {
    role: "tool",
    tool_call_id: toolCallId,
    content: contentText(content, (part) => imageLine(part, "Chat Completions takes no image in a tool result; not shown")),
  };
}

/** For any other API: the parts as they are, and all of it as text. */
export interface GenericToolResult {
  readonly content: readonly ModelPart[];
  /** Every part as text, images described. */
  readonly text: string;
  readonly isError: boolean;
  /** Present (true) when some part was described instead of kept. */
  readonly lossy?: true;
}

export function genericToolResult(content: ModelContent): GenericToolResult {
  return { content: content.parts, text: contentText(content), isError: content.isError, ...(content.lossy ? { lossy: true as const } : {}) };
}

function unsupportedImage(part: Extract<ModelPart, { type: "image" }>): string {
  return imageLine(part, API_IMAGE_TYPES.has(part.mimeType) ? "not shown" : "not shown: the model API takes JPEG, PNG, GIF and WebP images only");
}
