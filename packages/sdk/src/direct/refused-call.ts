import type { ModelApi } from "@tapedeck/protocol/api";
import { refusedNowText } from "../agent/agent-tools.js";
import { TapedeckError } from "../errors.js";

/**
 * A direct tool call the server refused before doing anything (429 over a quota, 413 too much
 * sent), as a failed tool result in the model API's own shape: the model can wait or send less,
 * so it is told, instead of the harness being thrown at. Undefined for any other error (a fault
 * of the platform or the harness), which is thrown as before.
 */
export function refusedCallResult(error: unknown, api: ModelApi, toolCallId: string): unknown {
  if (!TapedeckError.is(error) || (error.status !== 429 && error.status !== 413)) return undefined;
  const text = refusedNowText(error);
  switch (api) {
    case "anthropic":
      return { type: "tool_result", tool_use_id: toolCallId, content: text, is_error: true };
    case "responses":
      return { type: "function_call_output", call_id: toolCallId, output: text };
    case "chat":
      return { role: "tool", tool_call_id: toolCallId, content: text };
    default:
      return { content: [{ type: "text", text }], text, isError: true };
  }
}
