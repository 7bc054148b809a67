/**
 * @tapedeck/sdk: the thin client of Tapedeck. It uses `fetch` only and never depends on the
 * engine or on Node's built-ins, so it runs in Node, browsers and edge runtimes. Everything
 * exported here is public API.
 */
export { Tapedeck } from "./client.js";
export type { TapedeckOptions, TestResult } from "./client.js";
export type { EmbeddedOptions, EmbeddedTapedeck } from "./embedded.js";
export type { Worker } from "./worker/worker.js";
export type { ToolContext, ToolHandler, WorkerHandle, WorkerOptions, WorkerTools } from "./worker/worker-types.js";
export { defineTool, toolsetSpec, workerTools } from "./worker/define-tool.js";
export type { DefinedTool, ToolDefinitionSpec } from "./worker/define-tool.js";
export type { TaskRef, WorkerProblem } from "./worker/worker-problem.js";
export type { AgentTools } from "./agent/agent-tools-api.js";
export type { AgentToolsOptions } from "./agent/agent-tools.js";
export type { ToolGrantRequest, ToolGrantsOptions } from "./agent/grant-ceiling.js";
export type { AgentToolAdapters } from "./agent/adapters.js";
export type { AgentToolHandler, AgentToolResult, ToolCallContext } from "./agent/adapter-types.js";
export type { AnthropicAdapter } from "./agent/anthropic-adapter.js";
export type { OpenAIAdapter } from "./agent/openai-adapter.js";
export { AGENT_TOOL_NAMES } from "./agent/tool-definitions.js";
export type { AgentToolDefinition, AgentToolInputs, AgentToolName } from "./agent/tool-definitions.js";
export type {
  DecideOptions,
  DirectAnthropicTool,
  DirectAnthropicToolResult,
  DirectAnthropicToolUse,
  DirectChatTool,
  DirectChatToolCall,
  DirectChatToolMessage,
  DirectResponsesCall,
  DirectResponsesFunction,
  DirectResponsesOutput,
  DirectResponsesTool,
  DirectToolResult,
  DirectTools,
  DirectToolsOptions,
  HandleOptions,
} from "./direct/direct-tools.js";
export { verifyWebhook } from "./webhooks/verify-webhook.js";
export type { VerifyFailure, VerifyWebhookOptions, WebhookHeaders, WebhookVerification } from "./webhooks/verify-webhook.js";
export type { Webhooks } from "./resources/webhooks.js";
export { SCHEDULE_RUN_LABEL } from "./resources/schedules.js";
export type { ListSchedulesQuery, Schedules } from "./resources/schedules.js";
export { TapedeckError } from "./errors.js";
export type { ClientErrorCode } from "./errors.js";
export type { Fetch } from "./http-client.js";
export type { Approvals } from "./resources/approvals.js";
export type { Credentials } from "./resources/credentials.js";
export type { GetRunOptions, ListRunsQuery, Runs, StartResult } from "./resources/runs.js";
export type { RunEventsOptions, RunStreamItem } from "./resources/run-events.js";
export type { RunChange, RunChangesOptions } from "./resources/run-changes.js";
export type { ApprovalWait, FollowOptions, SignalWait } from "./resources/run-follow.js";
export type { Tokens } from "./resources/tokens.js";
export type { Namespaces } from "./resources/namespaces.js";
export type { SaveWorkflowResult, Toolsets } from "./resources/toolsets.js";
// The HTTP API's wire types and constants: the protocol's (@tapedeck/protocol/api), which the server validates with.
export { ApiErrorCode, MAX_POLL_WAIT_MS, NAMESPACE_HEADER, WEBHOOK_OUTPUT_LIMIT_BYTES, WebhookEventType, WebhookHeader } from "@tapedeck/protocol/api";
export type {
  ApiErrorBody,
  ApprovalList,
  ApprovalPolicy,
  ApprovalRule,
  ArgumentTest,
  BlobPageAnswer,
  BoundSession,
  DirectToolDefinition,
  DirectToolOptions,
  SessionApproval,
  SessionDecision,
  ToolCallAnswer,
  CancelRunRequest,
  CheckRequest,
  CheckResult,
  CompleteTaskRequest,
  CreatedWebhookEndpoint,
  CreateTokenRequest,
  CreateToolsetRequest,
  CreateWebhookRequest,
  CreateScheduleRequest,
  CatchupPolicy,
  Fire,
  FireKind,
  FireState,
  OverlapPolicy,
  Schedule,
  Credential,
  CredentialKind,
  CredentialList,
  CredentialScopeFields,
  CredentialValues,
  DecisionRequest,
  Declarations,
  DeleteCredentialRequest,
  Diagnostic,
  FailTaskRequest,
  ForkRunRequest,
  HeartbeatRequest,
  HostTask,
  IssuedToken,
  JournalPage,
  Labels,
  LeaseAnswer,
  LeaseStatus,
  PendingApproval,
  PolledTasks,
  PollTasksRequest,
  RegisteredToolset,
  RotatedKey,
  Run,
  RunList,
  RunOutputPage,
  SavedTool,
  SavedWorkflow,
  SaveToolRequest,
  SaveWorkflowRequest,
  SetCredentialRequest,
  SignalRequest,
  SignalResult,
  StartedRun,
  StartRunRequest,
  TestCall,
  TestReport,
  TestRequest,
  ToolSearchHit,
  ToolSearchResult,
  ToolsetInfo,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEvent,
  WebhookEventData,
  WebhookRunData,
} from "@tapedeck/protocol/api";
export { FailureCode, RunStatus, ToolError, formatRunError, gatewayRules, isOutcome, toolFailure } from "@tapedeck/protocol";
export type {
  DecisionWait,
  GatewayRuleOptions,
  GatewayRules,
  JournalEntry,
  JsonSchema,
  JsonValue,
  PinnedToolset,
  PinnedWorkflow,
  RunError,
  RunWait,
  ToolFailure,
  ToolsetSpec,
} from "@tapedeck/protocol";
