import type { FailureKind } from "./model-dialect.js";
import type { JsonObject } from "./model-turn.js";

/**
 * OpenAI's error body, shared by the Responses and Chat Completions dialects. The official
 * client builds its error message from `error.message`.
 */
export function openaiError(failure: FailureKind, message: string): JsonObject {
  const type = failure === "script" ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: null } };
}
