import { anthropicMessages } from "./anthropic-messages.js";
import type { ModelDialect } from "./model-dialect.js";
import type { JsonObject, ToolResultSeen } from "./model-turn.js";
import { openaiChat } from "./openai-chat.js";
import { openaiResponses } from "./openai-responses.js";

/** The model APIs a fake can speak, by the name a test passes to `startModelFake`. */
export const MODEL_APIS = {
  /** Anthropic Messages, `POST /v1/messages`. */
  anthropic: anthropicMessages,
  /** OpenAI Responses, `POST /v1/responses`. */
  "openai-responses": openaiResponses,
  /** OpenAI Chat Completions, `POST /v1/chat/completions`. */
  "openai-chat": openaiChat,
} as const satisfies Record<string, ModelDialect>;

export type ModelApi = keyof typeof MODEL_APIS;

/**
 * Every tool result in a request body sent to `api`, in conversation order, in the neutral
 * shape. A body of the wrong shape reads as no results rather than throwing.
 */
export function readToolResults(api: ModelApi, body: JsonObject): ToolResultSeen[] {
  return MODEL_APIS[api].toolResults(body);
}
