import type { IncomingHttpHeaders } from "node:http";

/**
 * The neutral vocabulary a test scripts model turns in, whatever API the fake speaks: a turn
 * says what the model answers, and a recorded request says what the client sent. Each dialect
 * translates between this and its API's exact JSON.
 */

/** A JSON object as it came off (or goes onto) the wire. */
export type JsonObject = Record<string, unknown>;

/** One tool call the model makes. */
export interface ScriptedToolCall {
  /** The tool's name as the client declared it. */
  name: string;
  /** The arguments; sent as an object (Anthropic) or as its JSON text (OpenAI). */
  input: unknown;
  /** The call id; when absent the dialect assigns a predictable one, e.g. `toolu_fake_1_1`. */
  id?: string;
  /** OpenAI Responses only: the namespace of the function called (a `function_call`'s `namespace`). */
  namespace?: string;
}

/** OpenAI Responses only: a client-executed tool search the model asks for (a `tool_search_call` item). */
export interface ScriptedToolSearch {
  /** Its arguments, as the client's `tool_search` parameters describe them. */
  input: unknown;
  /** The call id; when absent the dialect assigns a predictable one, e.g. `call_fake_1_1`. */
  id?: string;
}

/**
 * What the model answers in one turn. With tool calls the stop reason asks for tool results
 * (`tool_use` / `tool_calls`); without, the turn ends the conversation (`end_turn` / `stop`).
 */
export interface ModelTurn {
  /** The assistant's text, placed before any tool calls. */
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** OpenAI Responses only, placed before any tool calls; another dialect refuses a turn that has them. */
  toolSearches?: ScriptedToolSearch[];
}

/** A tool result the client sent back, in the same shape for every API. */
export interface ToolResultSeen {
  /** The id of the tool call this answers (`tool_use_id` / `call_id` / `tool_call_id`). */
  callId: string;
  /** The result as text; content parts are joined by newlines, non-text parts shown as `[type]`. */
  content: string;
  /** Present (and true) only when the client flagged the result as an error (Anthropic's `is_error`). */
  isError?: true;
}

/** One request the fake received whose body was a JSON object. */
export interface FakeRequest {
  /** 1-based position among the requests the fake recorded. */
  seq: number;
  method: string;
  /** The URL path and query as the client sent them, e.g. `/v1/messages`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: JsonObject;
  /** Every tool result in the body, in conversation order (a resent history repeats older ones). */
  toolResults: ToolResultSeen[];
}

/**
 * One step of a script: a fixed answer, or a function that looks at the request (for example
 * at the tool results the agent sent) before answering. A function that throws — a failed
 * assertion, say — is reported like any other failure of the fake.
 */
export type ScriptedTurn = ModelTurn | ((request: FakeRequest) => ModelTurn | Promise<ModelTurn>);
