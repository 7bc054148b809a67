/**
 * The agent tools for OpenAI's APIs: Responses (`openai.responses`: function tools, and
 * `function_call` items answered with `function_call_output` items) and Chat Completions
 * (`openai`: function tools, and `tool_calls` answered with `tool` messages).
 *
 * OpenAI sends arguments as JSON text; text that is not a JSON object is the model's mistake,
 * answered with a message for it. Neither API has an error flag on a tool's output: the text
 * says what went wrong.
 *
 * The types are structural (the tests check them against the `openai` package's), so the SDK's
 * declarations do not depend on that package being installed.
 */
import type { JsonValue } from "@tapedeck/protocol";
import type { Run } from "@tapedeck/protocol/api";
import { withRun, type AgentToolHandler, type AgentToolResult } from "./adapter-types.js";
import { bound } from "./text-limits.js";
import type { AgentToolDefinition, ToolInputSchema } from "./tool-definitions.js";

/** A function tool of the Responses API (`OpenAI.Responses.FunctionTool`). */
export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description: string;
  parameters: ToolInputSchema;
  /** Strict mode would require every property and forbid optional ones; the schemas have optional fields. */
  strict: false;
}

/** A `function_call` item of a response (`OpenAI.Responses.ResponseFunctionToolCall`). */
export interface ResponsesFunctionCall {
  readonly call_id: string;
  readonly name: string;
  /** JSON text. */
  readonly arguments: string;
}

/** The answer to a `function_call` item (`OpenAI.Responses.ResponseInputItem.FunctionCallOutput`). */
export interface ResponsesFunctionCallOutput {
  type: "function_call_output";
  call_id: string;
  output: string;
  /** The run the call started or read, for the harness: not enumerable, so it is never sent to the API. */
  readonly run?: Run;
}

/** A function tool of Chat Completions (`OpenAI.Chat.ChatCompletionFunctionTool`). */
export interface ChatFunctionTool {
  type: "function";
  function: { name: string; description: string; parameters: ToolInputSchema };
}

/** A tool call of an assistant message (`OpenAI.Chat.ChatCompletionMessageToolCall`: a function call, or a custom tool's). */
export type ChatToolCall =
  | { readonly id: string; readonly type: "function"; readonly function: { readonly name: string; readonly arguments: string } }
  | { readonly id: string; readonly type: "custom"; readonly custom: { readonly name: string; readonly input: string } };

/** The answer to a tool call (`OpenAI.Chat.ChatCompletionToolMessageParam`). */
export interface ChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
  /** The run the call started or read, for the harness: not enumerable, so it is never sent to the API. */
  readonly run?: Run;
}

export interface OpenAIResponsesAdapter {
  readonly tools: ResponsesFunctionTool[];
  /** Runs the tool of `call`. Rejects only for faults of the platform or the harness. */
  handle(call: ResponsesFunctionCall): Promise<ResponsesFunctionCallOutput>;
}

export interface OpenAIAdapter {
  /** Chat Completions' tools. */
  readonly tools: ChatFunctionTool[];
  /** Runs the tool of a Chat Completions tool call. Rejects only for faults of the platform or the harness. */
  handle(call: ChatToolCall): Promise<ChatToolMessage>;
  readonly responses: OpenAIResponsesAdapter;
}

export function openaiAdapter(definitions: readonly AgentToolDefinition[], handle: AgentToolHandler): OpenAIAdapter {
  const offered = new Set<string>(definitions.map((d) => d.name));
  const handleArguments = (name: string, text: string, toolCallId: string): Promise<AgentToolResult> =>
    // A tool that is not offered is answered as such, whatever its arguments.
    offered.has(name) ? parsedAndHandled(handle, name, text, toolCallId) : handle(name, text, { toolCallId });
  return {
    tools: definitions.map((d) => ({ type: "function", function: { name: d.name, description: d.description, parameters: d.inputSchema } })),
    async handle(call) {
      const [name, text] = call.type === "function" ? [call.function.name, call.function.arguments] : [call.custom.name, call.custom.input];
      const result = await handleArguments(name, text, call.id);
      return withRun<ChatToolMessage>({ role: "tool", tool_call_id: call.id, content: result.content }, result.run);
    },
    responses: {
      tools: definitions.map((d) => ({ type: "function", name: d.name, description: d.description, parameters: d.inputSchema, strict: false })),
      async handle(call) {
        const result = await handleArguments(call.name, call.arguments, call.call_id);
        return withRun<ResponsesFunctionCallOutput>({ type: "function_call_output", call_id: call.call_id, output: result.content }, result.run);
      },
    },
  };
}

/** Parses the arguments' JSON text and runs the tool; JSON that cannot be parsed is answered for the model. */
async function parsedAndHandled(handle: AgentToolHandler, name: string, text: string, toolCallId: string): Promise<AgentToolResult> {
  let input: JsonValue;
  try {
    // A model calling a tool without arguments may send nothing at all.
    input = text.trim() === "" ? {} : (JSON.parse(text) as JsonValue);
  } catch (error) {
    const why = error instanceof Error ? ` (${bound(error.message, 300)})` : "";
    return {
      content: `Your arguments to ${name} were not valid JSON${why}. Send them again as one JSON object matching the tool's parameters; inside strings, escape quotes as \\" and newlines as \\n.`,
      isError: true,
    };
  }
  return handle(name, input, { toolCallId });
}
