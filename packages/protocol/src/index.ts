/**
 * @tapedeck/protocol: the types and error codes shared by the engine, the server and the SDK.
 * Everything exported here is public API.
 */
export type { JsonObject, JsonValue } from "./json.js";
export { FailureCode, ToolError, toolFailure } from "./failure.js";
export type { ToolFailure } from "./failure.js";
export { PrimitiveTool, RunErrorKind, RunStatus, isOutcome, needsDecision, terminalStatuses } from "./run.js";
export type {
  Decision,
  DecisionWait,
  JournalEntry,
  JournalEvent,
  JournalKind,
  LogLevel,
  OutcomeEntry,
  ParkReason,
  RunError,
  RunWait,
  SourcePosition,
  ToolLogLine,
} from "./run.js";
export { formatDuration, parseDuration } from "./duration.js";
export { OUTPUT_PAGE, outputPage, outputText, pageWithinBytes } from "./output-page.js";
export type { RunOutputPage } from "./output-page.js";
export type { TestAnswerSource, TestCall, TestReport } from "./test-report.js";
export { decisionEvent } from "./run-event.js";
export type { RunEnd, RunEvent } from "./run-event.js";
export { toolPath } from "./toolset.js";
export { MAX_BUDGET_VALUE, runBudgetProblems } from "./run-budget.js";
export type { BudgetKind, RunBudget } from "./run-budget.js";
export type {
  ApprovalRule,
  ArgumentTest,
  HostToolSpec,
  HttpSpec,
  LibrarySpec,
  McpHttpServerSpec,
  McpServerOptions,
  McpServerRecipe,
  McpServerSpec,
  McpStdioServerSpec,
  JsonSchema,
  OnInterruption,
  PinnedTool,
  PlainApproval,
  ToolApproval,
  ToolRateLimit,
  PinnedToolset,
  PinnedWorkflow,
  PolicySpec,
  ToolPolicy,
  ToolSourceKind,
  ToolsetSpec,
} from "./toolset.js";
export type { PinnedUserTool, SubCallAnswer, UserToolFileSpec, UserToolGrantsSpec, UserToolHttpGrant, UserToolLimitsSpec } from "./user-tool.js";
export { formatRunError } from "./format.js";
export type { HostTask } from "./host-task.js";
export type { Diagnostic } from "./diagnostic.js";
export { workerWaitText } from "./worker-wait.js";
export { SEARCH_LIMIT } from "./tool-search.js";
export type { ResponsesFunctionTool, ResponsesNamespaceTool, ResponsesTool, ResponsesToolSearchTool } from "./responses-tools.js";
export type { ToolContext, ToolHandler, WorkerTools } from "./tool-handler.js";
export type { EmbeddedConnection, EmbeddedModule, EmbeddedOptions } from "./embedded.js";
export { gatewayRules } from "./gateway-rules.js";
export { AGENT_TOOL_NAMES } from "./agent-tool-names.js";
export type { AgentToolName } from "./agent-tool-names.js";
export type { GatewayRuleOptions, GatewayRules } from "./gateway-rules.js";
