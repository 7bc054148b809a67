/**
 * Direct tool mode in the SDK (`tapedeck.namespace(user.id).directTools({...})`): a toolset's
 * tools as model tools, each model tool call journaled in a session on the server — thin over
 * `/v1/sessions/…`: the server binds the table, decides approvals, sends the call with its
 * idempotency key and shapes the result for the model API; this file only carries them.
 *
 * Invariants:
 * - No state but the binding the server answered and the tools of the next request: a harness
 *   that restarts binds again and handles the same tool calls again, and gets the recorded
 *   results (nothing is sent twice).
 * - `handle` resolves with a result for every tool call, failures included (`isError`); it
 *   rejects only for faults of the platform or the harness (unreachable server, 401, 5xx, a
 *   `config_mismatch`), and when its `signal` aborts. A call waiting for a human is held on the
 *   server and asked again until it is decided or its approval expires.
 *
 * The block types are structural, like the agent adapters' (`@anthropic-ai/sdk` and `openai` are
 * not imported); the tests check them against the official types.
 */
import type { ResponsesFunctionTool, ResponsesTool } from "@tapedeck/protocol";
import type {
  BlobPageAnswer,
  BoundSession,
  DirectToolDefinition,
  DirectToolOptions,
  Labels,
  ModelApi,
  SessionApproval,
  SessionDecision,
  SessionTools,
  ToolCallAnswer,
} from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";
import { refusedCallResult } from "./refused-call.js";

/** How long one request holds while a call waits for a human; `handle` asks again after it. */
const HOLD_SECONDS = 25;

export interface DirectToolsOptions extends DirectToolOptions {
  /** The registered toolset whose tools the model gets. */
  readonly toolset: string;
  /** The session (a conversation's id): the durable journal these calls belong to, in the client's namespace. */
  readonly session: string;
  /**
   * Labels of the session; they also identify its calls with the model's tool call ids. Fixed when the session is created:
   * other labels later are refused (`conflict`, nothing bound); none keeps the session's.
   */
  readonly labels?: Labels;
  /** Only these tools (globs on `group.name`, name or model name). Default: every tool of the toolset. */
  readonly tools?: readonly string[];
  /** Answer or decide a call asked under another tool table (else `config_mismatch`); the model is told what changed. */
  readonly allowConfigDrift?: boolean;
}

/** `Anthropic.Messages.Tool` (with `defer_loading` under the `anthropic` lowering). */
export interface DirectAnthropicTool {
  name: string;
  description: string;
  input_schema: { type: "object"; [key: string]: unknown };
  defer_loading?: boolean;
}

/** A `tool_use` block of the model's answer. */
export interface DirectAnthropicToolUse {
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** `Anthropic.Messages.ToolResultBlockParam` (content blocks: text, image, or `tool_reference` for `tool_find`). */
export interface DirectAnthropicToolResult {
  type: "tool_result";
  tool_use_id: string;
  content:
    | string
    | (
        | { type: "text"; text: string }
        | { type: "image"; source: { type: "base64"; media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp"; data: string } }
        | { type: "tool_reference"; tool_name: string }
      )[];
  is_error?: boolean;
}

/** `OpenAI.Responses.FunctionTool`. */
export type DirectResponsesFunction = ResponsesFunctionTool;

/** `OpenAI.Responses.FunctionTool`, a `NamespaceTool` (the lazy tools of a group, under the `openai` lowering) or a client-executed `ToolSearchTool`. */
export type DirectResponsesTool = ResponsesTool;

/** A `function_call` item of a Responses output (with its `namespace` when the function is in one), or a client `tool_search_call`. */
export type DirectResponsesCall =
  | { readonly type: "function_call"; readonly call_id: string; readonly name: string; readonly arguments: string; readonly namespace?: string }
  | { readonly type: "tool_search_call"; readonly call_id: string | null; readonly arguments: unknown; readonly id?: string };

/** `OpenAI.Responses.ResponseInputItem.FunctionCallOutput`, or a `tool_search_output` item. */
export type DirectResponsesOutput =
  | {
      type: "function_call_output";
      call_id: string;
      output: string | ({ type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "auto" })[];
    }
  | { type: "tool_search_output"; call_id: string | null; execution: "client"; status: "completed"; tools: DirectResponsesTool[] };

/** `OpenAI.Chat.ChatCompletionFunctionTool`. */
export interface DirectChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A `tool_calls[]` entry of a Chat Completions message. */
export interface DirectChatToolCall {
  readonly id: string;
  readonly type?: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/** `OpenAI.Chat.ChatCompletionToolMessageParam`. */
export interface DirectChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/** For any other API: the parts, all of it as text, and whether it failed. */
export interface DirectToolResult {
  readonly content: readonly (
    { readonly type: "text"; readonly text: string } | { readonly type: "image"; readonly mimeType: string; readonly data: string }
  )[];
  readonly text: string;
  readonly isError: boolean;
  readonly lossy?: true;
}

export interface HandleOptions {
  /** Stops waiting for a human (the call stays pending on the server; handle it again later). */
  readonly signal?: AbortSignal;
}

export interface DecideOptions {
  readonly reason?: string;
  /** Approve every later call of this tool in the session too (deny rules still apply). */
  readonly always?: boolean;
}

/** The tools of one session, bound: pass `…tools` to the model API, and each tool call to `…handle`. */
export interface DirectTools {
  /** The session's record id: idempotency keys are `<sessionId>/<seq>`, approval ids too. */
  readonly sessionId: string;
  /** The binding (`bd_…`): the tool table as fixed now. */
  readonly binding: string;
  /** For the model, when the tools changed since the session's previous binding (the tools added, removed and changed); else undefined. */
  readonly note: string | undefined;
  /** One per tool name rewritten for the model APIs. */
  readonly warnings: readonly string[];
  readonly anthropic: {
    /** The tools of the next `messages.create` (they grow as `tool_find` loads tools under the `menu` lowering). */
    readonly tools: DirectAnthropicTool[];
    handle(block: DirectAnthropicToolUse, options?: HandleOptions): Promise<DirectAnthropicToolResult>;
  };
  readonly openai: {
    /** Chat Completions: the tools of the next `chat.completions.create`. */
    readonly tools: DirectChatTool[];
    handle(toolCall: DirectChatToolCall, options?: HandleOptions): Promise<DirectChatToolMessage>;
    readonly responses: {
      /** The tools of the next `responses.create`. */
      readonly tools: DirectResponsesTool[];
      handle(item: DirectResponsesCall, options?: HandleOptions): Promise<DirectResponsesOutput>;
    };
  };
  /** For any other API: `{ name, description, inputSchema }`. */
  readonly definitions: DirectToolDefinition[];
  handle(name: string, input: unknown, context: { readonly toolCallId: string } & HandleOptions): Promise<DirectToolResult>;
  /** One step, without waiting for a human: the result, or the approval the call waits for. */
  call(api: ModelApi, name: string, input: unknown, toolCallId: string): Promise<ToolCallAnswer>;
  /** The session's calls waiting for a human, with their summaries. */
  pending(): Promise<readonly SessionApproval[]>;
  approve(seq: number, options?: DecideOptions): Promise<SessionDecision>;
  reject(seq: number, options?: DecideOptions): Promise<SessionDecision>;
  /** A page of a result the session spilled (what `fetch_blob` gives the model), for the harness. */
  blob(handle: string, offset?: number): Promise<BlobPageAnswer>;
}

export function sessionPath(session: string): string {
  return `/v1/sessions/${encodeURIComponent(session)}`;
}

/** Binds the tools (one request) and answers them. */
export async function bindDirectTools(http: HttpClient, options: DirectToolsOptions): Promise<DirectTools> {
  if (typeof options !== "object" || options === null) throw new TypeError("directTools: pass { toolset, session, … }.");
  const { session, allowConfigDrift, ...bind } = options;
  if (typeof session !== "string" || session === "") throw new TypeError("directTools: `session` must be the conversation's id, a non-empty string.");
  if (typeof bind.toolset !== "string" || bind.toolset === "") throw new TypeError("directTools: `toolset` must be a registered toolset's id.");
  const path = sessionPath(session);
  const bound = await http.request<BoundSession>("POST", `${path}/bind`, { body: bind });
  let tools: SessionTools = bound.tools;
  const drift = allowConfigDrift === true ? { allowConfigDrift: true } : {};

  const run = async (api: ModelApi, name: string, input: unknown, toolCallId: string, signal: AbortSignal | undefined, namespace?: string) => {
    for (;;) {
      let answer: ToolCallAnswer;
      try {
        answer = await http.request<ToolCallAnswer>("POST", `${path}/calls`, {
          body: {
            binding: bound.binding,
            api,
            toolCallId,
            name,
            ...(namespace === undefined ? {} : { namespace }),
            input: input ?? null,
            wait: HOLD_SECONDS,
            ...drift,
          },
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        const refused = refusedCallResult(error, api, toolCallId);
        if (refused === undefined) throw error;
        return refused;
      }
      if (answer.status === "done") {
        if (answer.tools !== undefined) tools = answer.tools;
        return answer.result;
      }
      signal?.throwIfAborted();
    }
  };
  const decide = (decision: "approve" | "reject", seq: number, given: DecideOptions = {}) =>
    http.request<SessionDecision>("POST", `${path}/calls/${seq}/${decision}`, { body: { ...given, binding: bound.binding, ...drift } });

  return {
    sessionId: bound.id,
    binding: bound.binding,
    note: bound.note,
    warnings: bound.warnings,
    anthropic: {
      get tools() {
        return copy(tools.anthropic) as unknown as DirectAnthropicTool[];
      },
      handle: async (block, given = {}) => (await run("anthropic", block.name, block.input, block.id, given.signal)) as unknown as DirectAnthropicToolResult,
    },
    openai: {
      get tools() {
        return copy(tools.chat) as unknown as DirectChatTool[];
      },
      handle: async (toolCall, given = {}) =>
        (await run("chat", toolCall.function.name, toolCall.function.arguments, toolCall.id, given.signal)) as unknown as DirectChatToolMessage,
      responses: {
        get tools() {
          return copy(tools.responses) as unknown as DirectResponsesTool[];
        },
        handle: async (item, given = {}) => {
          if (item.type === "tool_search_call") {
            const id = item.call_id ?? item.id;
            if (typeof id !== "string") throw new TypeError("directTools: a tool_search_call needs its call_id (or id) to be answered.");
            return (await run("responses", "tool_search", item.arguments, id, given.signal)) as unknown as DirectResponsesOutput;
          }
          const namespace = typeof item.namespace === "string" && item.namespace !== "" ? item.namespace : undefined;
          return (await run("responses", item.name, item.arguments, item.call_id, given.signal, namespace)) as unknown as DirectResponsesOutput;
        },
      },
    },
    get definitions() {
      return copy<DirectToolDefinition>(tools.generic);
    },
    handle: async (name, input, context) => (await run("generic", name, input, context.toolCallId, context.signal)) as unknown as DirectToolResult,
    call: async (api, name, input, toolCallId) => {
      const answer = await http.request<ToolCallAnswer>("POST", `${path}/calls`, {
        body: { binding: bound.binding, api, toolCallId, name, input: input ?? null, ...drift },
      });
      if (answer.status === "done" && answer.tools !== undefined) tools = answer.tools;
      return answer;
    },
    pending: async () => (await http.request<{ approvals: readonly SessionApproval[] }>("GET", `${path}/approvals`)).approvals,
    approve: (seq, given) => decide("approve", seq, given),
    reject: (seq, given) => decide("reject", seq, given),
    blob: (handle, offset = 0) => http.request<BlobPageAnswer>("GET", `${path}/blobs/${encodeURIComponent(handle)}`, { query: { offset } }),
  };
}

/** A new array each time: a harness may push to it without changing the next request's tools. */
function copy<T>(items: readonly T[]): T[] {
  return structuredClone(items) as T[];
}
