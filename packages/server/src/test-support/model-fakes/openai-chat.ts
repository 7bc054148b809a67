import { type ModelDialect, type ReplyContext, refuseResponsesOnly, scriptedCallId } from "./model-dialect.js";
import type { JsonObject, ModelTurn } from "./model-turn.js";
import { contentText, estimateTokens, fieldProblem, objectsIn } from "./wire-json.js";
import { openaiError } from "./openai-error.js";

/**
 * OpenAI's Chat Completions API (`POST /v1/chat/completions`), non-streaming. The official
 * client's `baseURL` is the fake's `baseUrl` plus `/v1`: the client adds `/chat/completions`.
 */
export const openaiChat: ModelDialect = {
  path: "/v1/chat/completions",
  baseUrlHint: "pass the fake's baseUrl + \"/v1\" as the OpenAI client's baseURL (the client adds /chat/completions)",
  check(body) {
    return fieldProblem(body, "model", "string") ?? fieldProblem(body, "messages", "array");
  },
  reply: completionFor,
  toolResults(body) {
    return objectsIn(body.messages)
      .filter((message) => message.role === "tool")
      .map((message) => ({ callId: String(message.tool_call_id), content: contentText(message.content) }));
  },
  error: openaiError,
};

function completionFor(turn: ModelTurn, context: ReplyContext): JsonObject {
  refuseResponsesOnly(turn, "Chat Completions");
  const calls = turn.toolCalls ?? [];
  const message: JsonObject = { role: "assistant", content: turn.text ?? null, refusal: null, annotations: [] };
  if (calls.length > 0) {
    message.tool_calls = calls.map((call, i) => ({
      id: scriptedCallId("call", context, i, call.id),
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
    }));
  }
  const promptTokens = estimateTokens(context.request.messages);
  const completionTokens = estimateTokens(message);
  return {
    id: `chatcmpl-fake-${context.turn}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: context.request.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    system_fingerprint: null,
  };
}
