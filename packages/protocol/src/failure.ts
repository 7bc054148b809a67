import type { JsonValue } from "./json.js";

/**
 * Codes of the failures a tool call can end with. A failure is data: it crosses the sandbox
 * boundary, the wire and the journal, and a script can catch it as a `ToolError`.
 */
export const FailureCode = {
  /** The arguments do not match the tool's input schema; nothing was sent. */
  invalid_arguments: "invalid_arguments",
  /** The tool answered with an error (MCP `isError`, a host tool that threw). */
  tool_error: "tool_error",
  /** An attempt took longer than the tool's `timeout` policy. */
  timeout: "timeout",
  /** No worker took a host tool's call within its `queueTimeout` policy: nothing was sent. */
  queue_timeout: "queue_timeout",
  /** The call may or may not have happened: it was interrupted and its policy is `at_most_once`. */
  outcomeUnknown: "outcomeUnknown",
  /** A human or the harness rejected the call. */
  approval_rejected: "approval_rejected",
  /** The tool's schema changed while the run waited and the harness rejected the call. */
  schema_changed: "schema_changed",
  /** A rate limit refused the call. */
  rate_limited: "rate_limited",
  /** The `http` tool refused the request (host not allowed, private address, …). */
  refused: "refused",
  /** The `http` tool could not reach the host (no DNS answer, connection refused, TLS failure); nothing was sent. */
  network_error: "network_error",
  /** The result is larger than one recorded value may be. */
  result_too_large: "result_too_large",
  /** The script named a tool that the toolset does not have. */
  unknown_tool: "unknown_tool",
  /** `test_script`: the scenario has no (more) mock results for this tool. */
  no_mock: "no_mock",
  /** The call was interrupted more times than its policy allows. */
  too_many_attempts: "too_many_attempts",
  /** A workflow child run failed or was cancelled, or its output broke its schema (`result()`). */
  workflow_failed: "workflow_failed",
  /** A signal went to a workflow child that has ended: nothing was sent. */
  workflow_ended: "workflow_ended",
  /** Starting the workflow would nest workflows too deep. */
  workflow_too_deep: "workflow_too_deep",
  /**
   * The run went past its budget (calls in all or of one tool, bytes of results, child runs):
   * the call that would have gone past it was not sent, and the run failed. `details` names the
   * budget (`budget`), its `limit`, and for a per-tool budget the `tool`.
   */
  budget_exceeded: "budget_exceeded",
} as const;

export type FailureCode = (typeof FailureCode)[keyof typeof FailureCode];

/** The serialisable form of a failed tool call. `code` may also be a tool's own code. */
export interface ToolFailure {
  readonly code: FailureCode | (string & {});
  readonly message: string;
  /** True when sending the same call again later may succeed. */
  readonly retryable?: boolean;
  readonly details?: JsonValue;
}

const brand = Symbol.for("dev.tapedeck/ToolError");

/**
 * A failure as an `Error`, for host tool implementations that want to fail with a code:
 * `throw new ToolError("rate_limited", "try again in 30 s", { retryable: true })`.
 * Recognised by a brand, not by prototype, because errors cross realms.
 */
export class ToolError extends Error implements ToolFailure {
  readonly code: ToolFailure["code"];
  readonly retryable?: boolean;
  readonly details?: JsonValue;

  constructor(code: ToolFailure["code"], message: string, options: { retryable?: boolean; details?: JsonValue } = {}) {
    super(message);
    this.name = "ToolError";
    this.code = code;
    if (options.retryable !== undefined) this.retryable = options.retryable;
    if (options.details !== undefined) this.details = options.details;
    Object.defineProperty(this, brand, { value: true });
  }

  static is(value: unknown): value is ToolError {
    return typeof value === "object" && value !== null && (value as { [brand]?: unknown })[brand] === true;
  }

  toFailure(): ToolFailure {
    return toolFailure(this.code, this.message, this);
  }
}

/** Builds a `ToolFailure`, leaving out the optional fields that are unset. */
export function toolFailure(
  code: ToolFailure["code"],
  message: string,
  options: { retryable?: boolean | undefined; details?: JsonValue | undefined } = {},
): ToolFailure {
  return {
    code,
    message,
    ...(options.retryable === undefined ? {} : { retryable: options.retryable }),
    ...(options.details === undefined ? {} : { details: options.details }),
  };
}
