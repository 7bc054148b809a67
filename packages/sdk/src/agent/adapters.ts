/**
 * The agent tools for every model API from one handler: `definitions` and `handle` for any API,
 * `anthropic` for the Messages API, `openai.responses` for Responses, `openai` for Chat
 * Completions. Every adapter answers a tool name it does not offer with a result for the model
 * that lists the tools; the handler is only called with names it defined.
 */
import type { AgentToolHandler, AgentToolResult } from "./adapter-types.js";
import { anthropicAdapter, type AnthropicAdapter } from "./anthropic-adapter.js";
import { openaiAdapter, type OpenAIAdapter } from "./openai-adapter.js";
import { bound } from "./text-limits.js";
import type { AgentToolDefinition } from "./tool-definitions.js";

export interface AgentToolAdapters {
  /** Name, description and JSON Schema of the input of each tool offered, for any other API. */
  readonly definitions: readonly AgentToolDefinition[];
  /** Runs a tool by name, for any other API. Rejects only for faults of the platform or the harness. */
  readonly handle: AgentToolHandler;
  readonly anthropic: AnthropicAdapter;
  readonly openai: OpenAIAdapter;
}

/** The adapters of the tools `definitions`, all running through `handle`. */
export function agentToolAdapters(definitions: readonly AgentToolDefinition[], handle: AgentToolHandler): AgentToolAdapters {
  const offered = new Set<string>(definitions.map((d) => d.name));
  const checked: AgentToolHandler = (name, input, context) =>
    offered.has(name) ? handle(name, input, context) : Promise.resolve(unknownTool(name, [...offered]));
  return { definitions, handle: checked, anthropic: anthropicAdapter(definitions, checked), openai: openaiAdapter(definitions, checked) };
}

function unknownTool(name: string, offered: readonly string[]): AgentToolResult {
  return { content: `There is no tool ${bound(JSON.stringify(name), 200)}. The tools are: ${offered.join(", ")}.`, isError: true };
}
