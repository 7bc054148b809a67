/**
 * The agent tools for Anthropic's Messages API: `tools` for `messages.create`, and `handle`, which
 * answers a `tool_use` block of the model's answer with a `tool_result` block for the next user
 * message.
 *
 * The types are structural, not imported from `@anthropic-ai/sdk`: its declarations pull Node's
 * types into whatever imports them, and the SDK compiles without them (see `tsconfig.json`). The
 * tests check that these types are assignable to the official ones (`Tool`, `ToolResultBlockParam`,
 * and their beta twins) and that the official `ToolUseBlock` is assignable to `AnthropicToolUse`.
 */
import type { AgentToolDefinition, ToolInputSchema } from "./tool-definitions.js";
import type { Run } from "@tapedeck/protocol/api";
import { withRun, type AgentToolHandler } from "./adapter-types.js";

/** A tool, as `messages.create({ tools })` takes it (`Anthropic.Messages.Tool`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ToolInputSchema;
}

/** A `tool_use` block of the model's answer (`Anthropic.Messages.ToolUseBlock`, or the beta one). */
export interface AnthropicToolUse {
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** The answer to a `tool_use` block (`Anthropic.Messages.ToolResultBlockParam`). */
export interface AnthropicToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  /** Present (true) when the model should look at what went wrong. */
  is_error?: boolean;
  /** The run the call started or read, for the harness: not enumerable, so it is never sent to the API. */
  readonly run?: Run;
}

export interface AnthropicAdapter {
  /** New array per adapter: pass it as `tools`. */
  readonly tools: AnthropicTool[];
  /** Runs the tool of `block`. Rejects only for faults of the platform or the harness (the model's mistakes are `is_error` results). */
  handle(block: AnthropicToolUse): Promise<AnthropicToolResult>;
}

export function anthropicAdapter(definitions: readonly AgentToolDefinition[], handle: AgentToolHandler): AnthropicAdapter {
  return {
    tools: definitions.map((d) => ({ name: d.name, description: d.description, input_schema: d.inputSchema })),
    async handle(block) {
      const result = await handle(block.name, block.input, { toolCallId: block.id });
      return withRun<AnthropicToolResult>(
        { type: "tool_result", tool_use_id: block.id, content: result.content, ...(result.isError ? { is_error: true } : {}) },
        result.run,
      );
    },
  };
}
