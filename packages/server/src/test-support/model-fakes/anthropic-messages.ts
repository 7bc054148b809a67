import { type ModelDialect, type ReplyContext, refuseResponsesOnly, scriptedCallId } from "./model-dialect.js";
import type { JsonObject, ModelTurn, ToolResultSeen } from "./model-turn.js";
import { contentText, estimateTokens, fieldProblem, objectsIn } from "./wire-json.js";

/**
 * Anthropic's Messages API (`POST /v1/messages`), non-streaming. The official client's
 * `baseURL` is the fake's `baseUrl` itself: the client adds `/v1/messages`.
 */
export const anthropicMessages: ModelDialect = {
  path: "/v1/messages",
  baseUrlHint: "pass the fake's baseUrl as the Anthropic client's baseURL (the client adds /v1/messages)",
  check(body) {
    return fieldProblem(body, "model", "string") ?? fieldProblem(body, "max_tokens", "number") ?? fieldProblem(body, "messages", "array");
  },
  reply: messageFor,
  toolResults(body) {
    return objectsIn(body.messages)
      .filter((message) => message.role === "user")
      .flatMap((message) => objectsIn(message.content))
      .filter((block) => block.type === "tool_result")
      .map(toolResultOf);
  },
  error(failure, message) {
    const type = { invalid_request: "invalid_request_error", not_found: "not_found_error", script: "api_error" }[failure];
    return { type: "error", error: { type, message } };
  },
};

function messageFor(turn: ModelTurn, context: ReplyContext): JsonObject {
  refuseResponsesOnly(turn, "Anthropic Messages");
  const calls = turn.toolCalls ?? [];
  const content: JsonObject[] = [
    ...(turn.text === undefined ? [] : [{ type: "text", text: turn.text }]),
    ...calls.map((call, i) => ({ type: "tool_use", id: scriptedCallId("toolu", context, i, call.id), name: call.name, input: call.input ?? {} })),
  ];
  return {
    id: `msg_fake_${context.turn}`,
    type: "message",
    role: "assistant",
    model: context.request.model,
    content,
    stop_reason: calls.length > 0 ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: estimateTokens(context.request.messages),
      output_tokens: estimateTokens(content),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      service_tier: "standard",
    },
  };
}

function toolResultOf(block: JsonObject): ToolResultSeen {
  const seen: ToolResultSeen = { callId: String(block.tool_use_id), content: contentText(block.content) };
  if (block.is_error === true) seen.isError = true;
  return seen;
}
