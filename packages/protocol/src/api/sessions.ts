import type { JsonObject, JsonValue } from "../json.js";
import type { ArgumentTest } from "../toolset.js";
import { anyJson, id } from "./fields.js";
import { labels, type Labels } from "./labels.js";
import { MAX_WAIT_SECONDS } from "./limits.js";
import { REASON_MAX_LENGTH } from "./run-actions.js";
import { schemaFor } from "./schema-for.js";

/**
 * The wire format of direct tool mode (`/v1/sessions/…`, issue [direct-tools]): a harness binds a
 * toolset's tools as model tools in a session (the durable journal of one conversation's tool
 * calls), hands each model tool call to the server and gets the result in its model API's shape,
 * lists and decides the calls that wait for approval, and reads spilled results.
 *
 * The tool table's options (approval rules, lazy loading, result budgets, the error envelope) are
 * data: their schemas here check only their outer shape; the engine checks them whole and answers
 * every mistake at once, each with its path (`directTools.approval.ask[0].args[1].matches`).
 *
 * A session is named by the harness (`conversation.id`) and lives in the caller's namespace: the
 * same name in another namespace is another session, and a session outside the caller's scope
 * answers as missing.
 */

/** Longest session name: a conversation's id in the harness's application. */
export const SESSION_NAME_MAX_LENGTH = 200;
/** Longest model tool call id (the APIs' ids are tens of characters). */
export const TOOL_CALL_ID_MAX_LENGTH = 256;

/** One test on the arguments: the same shape as a toolset's approval rules' (`when`). */
export type { ArgumentTest };

export interface ApprovalRule {
  /** Names the rule in decisions and in the journal. Default: its stage and index, `ask[0]`. */
  readonly id?: string;
  /** Tools it applies to: a glob on the tool's path (`group.name`), name or model name. Default `*`. */
  readonly tool?: string;
  /** Tests that must all hold. Default none: the rule applies to every call of its tools. */
  readonly args?: readonly ArgumentTest[];
  /** `ask` rules: the approver's line, a template (`"TikTok {/tool_name}"`, cut at 200 characters). */
  readonly summary?: string;
  /** Why: shown to the model when the rule denies, to the approver when it asks. */
  readonly reason?: string;
}

/** Stages deny → ask → allow (first match wins), then `unmatched`. A rule that cannot be evaluated denies. */
export interface ApprovalPolicy {
  /** Checked first: a match denies the call. A string is a tool glob alone. */
  readonly deny?: readonly (ApprovalRule | string)[];
  /** Then: a match asks a human. */
  readonly ask?: readonly (ApprovalRule | string)[];
  /** Then: a match lets the call through. */
  readonly allow?: readonly (ApprovalRule | string)[];
  /** Then, for a call none matched. Default `byRisk`: low risk (read-only) is allowed, medium and high risk ask. */
  readonly unmatched?: "byRisk" | "ask" | "allow";
  /** Risk overrides, first match wins (a glob on the tool). */
  readonly risk?: readonly { readonly tool: string; readonly risk: "low" | "medium" | "high" }[];
}

export interface DirectResultBudget {
  /** Estimated tokens a result may have. Default 16,000. */
  readonly maxTokens?: number;
  /** Default `spill`: a preview and a `fetch_blob` handle; `truncate`: the preview only. */
  readonly overflow?: "spill" | "truncate";
}

/** The options that shape a session's tool table: pinned in its binding. */
export interface DirectToolOptions {
  readonly approval?: ApprovalPolicy;
  /** Tools loaded on demand: the menu (any API), Anthropic's `defer_loading`, or OpenAI Responses' tool search. */
  readonly lazy?: { readonly lowering: "menu" | "anthropic" | "openai"; readonly tools?: readonly string[]; readonly readOnly?: boolean };
  /** Result budgets; `tools` overrides them per tool (first matching glob). */
  readonly results?: DirectResultBudget & { readonly tools?: readonly (DirectResultBudget & { readonly tool: string })[] };
  /** Where a successful result's JSON says it failed (JSON Pointers): `{ code: "/code", message: "/message" }`. */
  readonly errorEnvelope?: { readonly code: string; readonly message: string };
}

/** `/v1/sessions/:session/…`. */
export interface SessionParams {
  readonly session: string;
}

export const sessionParams = schemaFor<SessionParams>()({
  type: "object",
  properties: {
    session: {
      type: "string",
      minLength: 1,
      maxLength: SESSION_NAME_MAX_LENGTH,
      description: "The session's name (a conversation's id), in the caller's namespace.",
    },
  },
  required: ["session"],
  additionalProperties: false,
});

/** `POST /v1/sessions/:session/bind`. */
export interface BindRequest extends DirectToolOptions {
  readonly toolset: string;
  /**
   * Labels of the session (and of the keys that may reach it); they also identify its calls with the model's tool call ids.
   * Fixed when the session is created: a later bind with other labels is refused (409 `conflict`); one without keeps them.
   */
  readonly labels?: Labels;
  /** Only these tools of the toolset (globs on path, name or model name). Default: every tool. */
  readonly tools?: readonly string[];
}

export const bindRequest = schemaFor<BindRequest>()({
  type: "object",
  properties: {
    toolset: id,
    labels,
    tools: { type: "array", items: { type: "string" }, maxItems: 1000 },
    approval: {
      type: "object",
      description: "Approval rules (deny, ask, allow, unmatched, risk): checked by the engine, which names the path of every mistake.",
    },
    lazy: { type: "object", description: '{ lowering: "menu" | "anthropic" | "openai", tools?: [...globs], readOnly?: boolean }' },
    results: { type: "object", description: '{ maxTokens?, overflow?: "spill" | "truncate", tools?: [{ tool, maxTokens?, overflow? }] }' },
    errorEnvelope: { type: "object", description: '{ code: "/code", message: "/message" }: JSON Pointers into a successful result.' },
  },
  required: ["toolset"],
  additionalProperties: false,
});

/** A tool as any model API is given it. */
export interface DirectToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
}

/** The model APIs direct tools shape their tools and results for. */
export const ModelApi = {
  /** Anthropic Messages: `tools`, `tool_use` → `tool_result`. */
  anthropic: "anthropic",
  /** OpenAI Responses: function tools (and `tool_search`), `function_call` → `function_call_output`. */
  responses: "responses",
  /** OpenAI Chat Completions: function tools, `tool_calls` → `{ role: "tool" }` messages. */
  chat: "chat",
  /** Any other API: `{ name, description, inputSchema }` and `{ content, text, isError }`. */
  generic: "generic",
} as const;
export type ModelApi = (typeof ModelApi)[keyof typeof ModelApi];

const modelApi = { type: "string", enum: Object.values(ModelApi) } as const;

/** The tools of the session's next request, per model API (given the tools loaded so far). */
export interface SessionTools {
  /** `Anthropic.Messages.Tool[]`. */
  readonly anthropic: readonly JsonObject[];
  /** `OpenAI.Responses.Tool[]`. */
  readonly responses: readonly JsonObject[];
  /** `OpenAI.Chat.ChatCompletionTool[]`. */
  readonly chat: readonly JsonObject[];
  readonly generic: readonly DirectToolDefinition[];
}

const sessionTools = {
  type: "object",
  properties: {
    anthropic: { type: "array", items: { type: "object" } },
    responses: { type: "array", items: { type: "object" } },
    chat: { type: "array", items: { type: "object" } },
    generic: { type: "array", items: { type: "object" } },
  },
  required: ["anthropic", "responses", "chat", "generic"],
} as const;

/** `POST /v1/sessions/:session/bind`: the table is recorded in the session (hidden from the model). */
export interface BoundSession {
  /** The session's name, as given. */
  readonly session: string;
  /** The session's record: its calls' idempotency keys are `<id>/<seq>`, its approvals' ids too. */
  readonly id: string;
  /** `bd_…`: the binding every call of these tools names. */
  readonly binding: string;
  readonly tools: SessionTools;
  /** For the model, when the tools changed since the session's previous binding: the tools added, removed and changed. */
  readonly note?: string;
  /** One per tool name rewritten for the model APIs. */
  readonly warnings: readonly string[];
}

export const boundSession = schemaFor<BoundSession>()({
  type: "object",
  properties: {
    session: { type: "string" },
    id: { type: "string" },
    binding: { type: "string" },
    tools: sessionTools,
    note: { type: "string" },
    warnings: { type: "array", items: { type: "string" } },
  },
  required: ["session", "id", "binding", "tools", "warnings"],
});

/** `POST /v1/sessions/:session/calls`: one model tool call. */
export interface ToolCallRequest {
  readonly binding: string;
  /** The shape of the answer. */
  readonly api: ModelApi;
  /** The model's id for the call (`tool_use.id`, `call_id`, `tool_calls[].id`): handling it again answers the recorded result. */
  readonly toolCallId: string;
  /** The tool's model name; `tool_search` for a Responses `tool_search_call`. */
  readonly name: string;
  /** The `namespace` of a Responses `function_call` (the `openai` lowering puts lazy tools in namespaces); checked against the tool's. */
  readonly namespace?: string;
  /** The arguments: an object, or its JSON text (as OpenAI sends it). */
  readonly input: JsonValue;
  /** Hold the request up to this many seconds while the call waits for approval (default 0: answer `pending` at once). */
  readonly wait?: number;
  /** A call asked under another binding is answered under this one (else 409 `config_mismatch`); the model is told what changed. */
  readonly allowConfigDrift?: boolean;
}

export const toolCallRequest = schemaFor<ToolCallRequest>()({
  type: "object",
  properties: {
    binding: id,
    api: modelApi,
    toolCallId: { type: "string", minLength: 1, maxLength: TOOL_CALL_ID_MAX_LENGTH },
    name: { type: "string", minLength: 1, maxLength: 256 },
    namespace: { type: "string", minLength: 1, maxLength: 256 },
    input: anyJson,
    wait: { type: "integer", minimum: 0, maximum: MAX_WAIT_SECONDS },
    allowConfigDrift: { type: "boolean" },
  },
  required: ["binding", "api", "toolCallId", "name", "input"],
  additionalProperties: false,
});

/** A call of a session waiting for a human. `id` is `<session id>/<seq>`, its idempotency key. */
export interface SessionApproval {
  readonly id: string;
  /** The session's name and record. */
  readonly session: string;
  readonly sessionId: string;
  readonly seq: number;
  /** The tool's path, `group.name`, and the name the model called it by. */
  readonly tool: string;
  readonly modelName: string;
  readonly args: JsonValue;
  /** The approver's line (≤ 200 characters). */
  readonly summary: string;
  /** Why it asks (the rule, or the tool's risk). */
  readonly reason: string;
  readonly ruleId?: string;
  /** The binding it was asked under. */
  readonly binding: string;
  readonly askedAt: number;
  /** After this the model gets "approval expired". */
  readonly expiresAt: number;
  readonly labels: Labels;
  readonly namespace?: string;
}

export const sessionApproval = schemaFor<SessionApproval>()({
  type: "object",
  properties: {
    id: { type: "string" },
    session: { type: "string" },
    sessionId: { type: "string" },
    seq: { type: "integer" },
    tool: { type: "string" },
    modelName: { type: "string" },
    args: anyJson,
    summary: { type: "string" },
    reason: { type: "string" },
    ruleId: { type: "string" },
    binding: { type: "string" },
    askedAt: { type: "integer" },
    expiresAt: { type: "integer" },
    labels,
    namespace: { type: "string" },
  },
  required: ["id", "session", "sessionId", "seq", "tool", "modelName", "args", "summary", "reason", "binding", "askedAt", "expiresAt", "labels"],
});

/** What handling a model tool call gives. */
export type ToolCallAnswer =
  /** The call has its outcome: `result` is the block to give back to the model, in the request's API's shape. */
  | {
      readonly status: "done";
      /** The call's number in the session, for a toolset call (direct mode's own tools have none). */
      readonly seq?: number;
      readonly result: JsonValue;
      readonly isError: boolean;
      /** Present when the call changed the tools of the next request (`tool_find` loaded some). */
      readonly tools?: SessionTools;
    }
  /** The call waits for a human: handle the same tool call again (or hold with `wait`) to get its result once decided. */
  | { readonly status: "pending"; readonly approval: SessionApproval };

export const toolCallAnswer = schemaFor<ToolCallAnswer>()({
  type: "object",
  properties: {
    status: { type: "string", enum: ["done", "pending"] },
    seq: { type: "integer" },
    result: anyJson,
    isError: { type: "boolean" },
    tools: sessionTools,
    approval: sessionApproval,
  },
  required: ["status"],
});

/** `GET /v1/sessions/:session/approvals`, `GET /v1/session-approvals`. */
export interface SessionApprovalList {
  /** Oldest first. */
  readonly approvals: readonly SessionApproval[];
}

export const sessionApprovalList = schemaFor<SessionApprovalList>()({
  type: "object",
  properties: { approvals: { type: "array", items: sessionApproval } },
  required: ["approvals"],
});

/** `/v1/sessions/:session/calls/:seq/…`. */
export interface SessionCallParams {
  readonly session: string;
  readonly seq: number;
}

export const sessionCallParams = schemaFor<SessionCallParams>()({
  type: "object",
  properties: { ...sessionParams.properties, seq: { type: "integer", minimum: 1, description: "The call's number in the session (`seq`)." } },
  required: ["session", "seq"],
  additionalProperties: false,
});

/** `POST /v1/sessions/:session/calls/:seq/approve` and `/reject`. */
export interface SessionDecisionRequest {
  readonly reason?: string;
  /** Approve: also every later call of this tool in this session (deny rules still apply). */
  readonly always?: boolean;
  /** The binding of the tools deciding it (default: the one it was asked under). Another binding fails `config_mismatch` unless `allowConfigDrift`. */
  readonly binding?: string;
  readonly allowConfigDrift?: boolean;
}

export const sessionDecisionRequest = schemaFor<SessionDecisionRequest>()({
  type: "object",
  properties: {
    reason: { type: "string", maxLength: REASON_MAX_LENGTH },
    always: { type: "boolean" },
    binding: id,
    allowConfigDrift: { type: "boolean" },
  },
  additionalProperties: false,
});

/** What deciding a session's call answers. */
export interface SessionDecision {
  readonly id: string;
  readonly decision: "approved" | "rejected";
  /** On drift allowed: what changed, for the model. */
  readonly note?: string;
}

export const sessionDecision = schemaFor<SessionDecision>()({
  type: "object",
  properties: { id: { type: "string" }, decision: { type: "string", enum: ["approved", "rejected"] }, note: { type: "string" } },
  required: ["id", "decision"],
});

/** `GET /v1/sessions/:session/blobs/:handle`. */
export interface BlobParams {
  readonly session: string;
  readonly handle: string;
}

export const blobParams = schemaFor<BlobParams>()({
  type: "object",
  properties: { ...sessionParams.properties, handle: { type: "string", pattern: "^blob_[0-9a-f]{40}$" } },
  required: ["session", "handle"],
  additionalProperties: false,
});

export interface BlobQuery {
  /** Character offset (UTF-16 code units). Default 0. */
  readonly offset?: number;
}

export const blobQuery = schemaFor<BlobQuery>()({ type: "object", properties: { offset: { type: "integer", minimum: 0 } }, additionalProperties: false });

/** A page of a spilled result: chained by `nextOffset` from 0, the pages are the whole text exactly. */
export interface BlobPageAnswer {
  readonly text: string;
  readonly offset: number;
  readonly total: number;
  readonly nextOffset?: number;
}

export const blobPageAnswer = schemaFor<BlobPageAnswer>()({
  type: "object",
  properties: { text: { type: "string" }, offset: { type: "integer" }, total: { type: "integer" }, nextOffset: { type: "integer" } },
  required: ["text", "offset", "total"],
});
