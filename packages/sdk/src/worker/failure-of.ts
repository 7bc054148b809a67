import { ToolError, toolFailure, type ToolFailure } from "@tapedeck/protocol";

/**
 * The failure a thrown value answers a call with: a `ToolError` as it is; any error or object
 * with a string `code` and `message` keeps its code (a tool's own `rate_limited`, Node's
 * `ECONNREFUSED`); anything else is `tool_error` with its message.
 */
export function failureOf(error: unknown): ToolFailure {
  if (ToolError.is(error)) return error.toFailure();
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code === "string" && code !== "" && typeof message === "string") return toolFailure(code, message);
    if (typeof message === "string") return toolFailure("tool_error", message);
  }
  return toolFailure("tool_error", String(error));
}
