import { type ModelDialect, type ReplyContext, scriptedCallId } from "./model-dialect.js";
import type { JsonObject, ModelTurn } from "./model-turn.js";
import { contentText, estimateTokens, fieldProblem, objectsIn } from "./wire-json.js";
import { openaiError } from "./openai-error.js";

/**
 * OpenAI's Responses API (`POST /v1/responses`), non-streaming. The official client's `baseURL`
 * is the fake's `baseUrl` plus `/v1`: the client adds only `/responses`. The reply carries
 * `object: "response"`, which is what makes the client compute `response.output_text`.
 */
export const openaiResponses: ModelDialect = {
  path: "/v1/responses",
  baseUrlHint: "pass the fake's baseUrl + \"/v1\" as the OpenAI client's baseURL (the client adds /responses)",
  check(body) {
    const input = body.input;
    const inputOk = typeof input === "string" || Array.isArray(input);
    return fieldProblem(body, "model", "string") ?? (inputOk ? undefined : "`input`: expected a string or an array of input items");
  },
  reply: responseFor,
  toolResults(body) {
    return objectsIn(body.input)
      .filter((item) => item.type === "function_call_output")
      .map((item) => ({ callId: String(item.call_id), content: contentText(item.output) }));
  },
  error: openaiError,
};

function responseFor(turn: ModelTurn, context: ReplyContext): JsonObject {
  const { request } = context;
  const output = [...messageItems(turn, context), ...toolSearchItems(turn, context), ...functionCallItems(turn, context)];
  const now = Math.floor(Date.now() / 1000);
  const inputTokens = estimateTokens(request.input);
  const outputTokens = estimateTokens(output);
  return {
    id: `resp_fake_${context.turn}`,
    object: "response",
    created_at: now,
    completed_at: now,
    status: "completed",
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    model: request.model,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    temperature: request.temperature ?? 1,
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    metadata: request.metadata ?? {},
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
}

function messageItems(turn: ModelTurn, context: ReplyContext): JsonObject[] {
  if (turn.text === undefined) return [];
  const content = [{ type: "output_text", text: turn.text, annotations: [], logprobs: [] }];
  return [{ type: "message", id: `msg_fake_${context.turn}`, status: "completed", role: "assistant", content }];
}

function toolSearchItems(turn: ModelTurn, context: ReplyContext): JsonObject[] {
  return (turn.toolSearches ?? []).map((search, i) => ({
    type: "tool_search_call",
    id: `tsc_fake_${context.turn}_${i + 1}`,
    call_id: scriptedCallId("call", context, i, search.id),
    arguments: search.input ?? {},
    execution: "client",
    status: "completed",
  }));
}

function functionCallItems(turn: ModelTurn, context: ReplyContext): JsonObject[] {
  const searches = turn.toolSearches?.length ?? 0;
  return (turn.toolCalls ?? []).map((call, i) => ({
    type: "function_call",
    id: `fc_fake_${context.turn}_${i + 1}`,
    call_id: scriptedCallId("call", context, searches + i, call.id),
    name: call.name,
    ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
    arguments: JSON.stringify(call.input ?? {}),
    status: "completed",
  }));
}
