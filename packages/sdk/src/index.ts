/**
 * @tapedeck/sdk: the thin client of Tapedeck. It uses `fetch` only and never depends on the
 * engine or on Node's built-ins, so it runs in Node, browsers and edge runtimes. Everything
 * exported here is public API.
 */
export { Tapedeck } from "./client.js";
export type { TapedeckOptions } from "./client.js";
export { TapedeckError } from "./errors.js";
export type { ClientErrorCode } from "./errors.js";
export type { Fetch } from "./http-client.js";
export type { Approvals } from "./resources/approvals.js";
export type { GetRunOptions, ListRunsQuery, Runs, StartResult } from "./resources/runs.js";
export type { Tokens } from "./resources/tokens.js";
export type { Toolsets } from "./resources/toolsets.js";
export { ApiErrorCode, NAMESPACE_HEADER } from "./api.js";
export type {
  ApiErrorBody,
  ApprovalList,
  CancelRunRequest,
  CheckRequest,
  CheckResult,
  CreateTokenRequest,
  CreateToolsetRequest,
  Declarations,
  DecisionRequest,
  Diagnostic,
  ForkRunRequest,
  IssuedToken,
  JournalPage,
  Labels,
  PendingApproval,
  RegisteredToolset,
  Run,
  RunList,
  SignalRequest,
  SignalResult,
  StartedRun,
  StartRunRequest,
  ToolsetInfo,
} from "./api.js";
export { FailureCode, RunStatus, ToolError, formatRunError, isOutcome, toolFailure } from "@tapedeck/protocol";
export type { DecisionWait, JournalEntry, JsonValue, PinnedToolset, RunError, RunWait, ToolFailure, ToolsetSpec } from "@tapedeck/protocol";
