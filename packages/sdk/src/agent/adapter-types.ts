/**
 * The contract between the adapters and the handlers of the agent tools: one function that runs
 * a tool by name. Each adapter (Anthropic, OpenAI Responses, OpenAI Chat Completions) turns the
 * model API's tool call into a call of it, and its result into the API's tool result.
 */
import type { Run } from "@tapedeck/protocol/api";

/** What the model gets back from a tool call. */
export interface AgentToolResult {
  /** Plain text written for the model, bounded: what the adapters send as the tool's result. */
  readonly content: string;
  /** True when the text reports a mistake the model can fix (a bad argument, a refused script, a failed run). */
  readonly isError: boolean;
  /** The run the call started or read, for the harness (it is not sent to the model). */
  readonly run?: Run;
}

/**
 * `result` with `run` as a property the harness reads (`approvals.pending(result.run)`) that is
 * never sent to the model: it is not enumerable, so no JSON body (nor spread) carries it.
 */
export function withRun<T extends object>(result: T, run: Run | undefined): T & { readonly run?: Run } {
  if (run !== undefined) Object.defineProperty(result, "run", { value: run, enumerable: false });
  return result;
}

export interface ToolCallContext {
  /** The model's id of the tool call: the idempotency key of what the call starts or sends. */
  readonly toolCallId: string;
}

/**
 * Runs agent tool `name` with the model's `input`. Resolves with a result for the model, also
 * for the model's mistakes (`isError`); rejects only for faults of the platform or of the harness
 * (an unreachable server, a 401, a 5xx), which no text for the model can fix.
 */
export type AgentToolHandler = (name: string, input: unknown, context: ToolCallContext) => Promise<AgentToolResult>;
