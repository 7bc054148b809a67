/**
 * The OpenAI Responses API's tool shapes that Tapedeck hands a model (direct tools under the
 * `openai` lowering): structural copies of the `openai` package's types, so that neither the
 * engine nor the SDK needs that package to name them. A type test in the engine assigns what the
 * engine builds from them to `OpenAI.Responses.Tool[]` (`direct/lazy-tools.test.ts`).
 */

/** `OpenAI.Responses.FunctionTool`. */
export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean | null;
  defer_loading?: boolean;
}

/** `OpenAI.Responses.ToolSearchTool`, executed by the client. */
export interface ResponsesToolSearchTool {
  type: "tool_search";
  execution: "client";
  description: string;
  parameters: Record<string, unknown>;
}

/** `OpenAI.Responses.NamespaceTool`, holding functions only. */
export interface ResponsesNamespaceTool {
  type: "namespace";
  name: string;
  description: string;
  tools: ResponsesFunctionTool[];
}

export type ResponsesTool = ResponsesFunctionTool | ResponsesNamespaceTool | ResponsesToolSearchTool;
