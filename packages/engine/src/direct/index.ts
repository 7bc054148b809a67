/**
 * Direct tool mode (seed 002, issue [direct-tools]): the parts that do not depend on the call
 * intake, each a pure module over data, so that the same rules work embedded and over HTTP. One
 * concept per file:
 *
 * - approval: `approval-policy.ts` (shapes, checker), `approval-decision.ts` (deny → ask → allow →
 *   unmatched), `tool-risk.ts`, `tool-glob.ts`, `../toolset/json-pointer.ts`, `../toolset/argument-test.ts`, `../util/linear-regex.ts`,
 *   `summary-template.ts`, `approval-signature.ts` (gateway rules: `@tapedeck/protocol`'s `gatewayRules`) (config_mismatch)
 * - the tool table: `direct-options.ts`, `model-name-table.ts`, `own-tools.ts`, `direct-binding.ts`,
 *   `binding-diff.ts` (the note), `direct-call-key.ts`
 * - results: `model-content.ts`, `failure-text.ts`, `result-blocks.ts`, `business-errors.ts`
 * - spill: `token-estimate.ts`, `spill.ts`, `fetch-blob.ts` (blobs live in the store: `store/blob-store.ts`, `store/sqlite-blob-store.ts`)
 * - lazy tools: `lazy-menu.ts`, `tool-find.ts`, `menu-lowering.ts`, `anthropic-lowering.ts`,
 *   `openai-lowering.ts`, `first-request-tokens.ts`
 *
 * - sessions: `direct-sessions.ts` (what the server needs), `direct-session-host.ts` (`Engine.direct`),
 *   `direct-session.ts` (one live session over the call intake), `session-journal.ts` (its journal,
 *   read), `session-table.ts` (a binding from a request); its approvals are signed with a key of `secrets/purpose-key.ts`
 */
export { anthropicTools, anthropicToolFindResult } from "./anthropic-lowering.js";
export type { AnthropicToolDefinition, AnthropicToolReference, AnthropicToolFindResult } from "./anthropic-lowering.js";
export { decideApproval } from "./approval-decision.js";
export type { ApprovalCall, ApprovalContext, DecidedBy, ApprovalDecision } from "./approval-decision.js";
export { Unmatched, STAGES, POLICY_LIMITS, checkApprovalPolicy, validateApprovalPolicy } from "./approval-policy.js";
export type {
  ArgumentTest,
  ApprovalRule,
  RuleSpec,
  ApprovalPolicy,
  Stage,
  PolicyError,
  CompiledTest,
  CompiledRule,
  CompiledPolicy,
  CheckedPolicy,
} from "./approval-policy.js";
export { signPendingApproval, checkPendingApproval } from "./approval-signature.js";
export type { PendingApproval, ApprovalCheck, ApprovalCheckInput } from "./approval-signature.js";
export { diffBindings, bindingNote, noteForBinding } from "./binding-diff.js";
export type { BindingDiff, BindingSection } from "./binding-diff.js";
export { MemoryBlobStore } from "../store/blob-store.js";
export type { BlobStore } from "../store/blob-store.js";
export { businessErrorOf, withBusinessError, businessErrorLine } from "./business-errors.js";
export type { BusinessError } from "./business-errors.js";
export { BINDING_VERSION, bindDirectTools, bindingId, definitionDigest } from "./direct-binding.js";
export type { BindingTool, DirectBinding, BoundTool, BoundTable } from "./direct-binding.js";
export { MAX_TOOL_CALL_ID_LENGTH, directCallId, directIdempotencyKey } from "./direct-call-key.js";
export { Lowering, Overflow, DEFAULT_MAX_TOKENS, MAX_RESULT_TOKENS, checkDirectOptions } from "./direct-options.js";
export type { LazyOptions, ResultBudget, ResultOptions, ErrorEnvelope, DirectOptions, CheckedDirectOptions, CheckedOptions } from "./direct-options.js";
export { failureText, failureContent, directFailureOf } from "./failure-text.js";
export type { ArgumentProblem, DirectFailure, DirectFailureKind } from "./failure-text.js";
export { BLOB_PAGE_BYTES, blobPage, fetchBlob } from "./fetch-blob.js";
export type { BlobPage } from "./fetch-blob.js";
export { firstRequestTokens } from "./first-request-tokens.js";
export type { FirstRequestTokens } from "./first-request-tokens.js";
export { MAX_POINTER_LENGTH, parsePointer, readPointer } from "../toolset/json-pointer.js";
export type { ParsedPointer, PointerValue } from "../toolset/json-pointer.js";
export { MENU_LINE_MAX, isLazyTool, menuLine, toolFindDefinition, menuToolFind } from "./lazy-menu.js";
export { MAX_PATTERN_LENGTH, MAX_PROGRAM, MAX_SUBJECT_LENGTH, compileRegex } from "../util/linear-regex.js";
export type { LinearRegex, CompiledRegex } from "../util/linear-regex.js";
export { menuDefinitions, chatTools } from "./menu-lowering.js";
export type { ChatFunctionTool } from "./menu-lowering.js";
export { EMPTY_RESULT_TEXT, contentOfValue, contentOfMcpResult, textPart, contentText, imageLine } from "./model-content.js";
export type { ModelPart, ModelContent } from "./model-content.js";
export { modelNameTable } from "./model-name-table.js";
export type { ModelNameTable } from "./model-name-table.js";
export { responsesTools, toolSearchArguments, toolSearchOutput } from "./openai-lowering.js";
export type { ResponsesFunctionTool, ResponsesToolSearchTool, ResponsesTool, ResponsesToolSearchCall, ResponsesToolSearchOutput } from "./openai-lowering.js";
export { TOOL_FIND, FETCH_BLOB, OWN_TOOL_NAMES, TOOL_FIND_MAX, TOOL_FIND_INPUT_SCHEMA, FETCH_BLOB_DEFINITION } from "./own-tools.js";
export type { ModelToolDefinition } from "./own-tools.js";
export { anthropicToolResult, responsesFunctionCallOutput, chatToolMessage, genericToolResult } from "./result-blocks.js";
export type {
  AnthropicMediaType,
  AnthropicResultBlock,
  AnthropicToolResult,
  ResponsesOutputPart,
  ResponsesFunctionCallOutput,
  ChatToolMessage,
  GenericToolResult,
} from "./result-blocks.js";
export { PREVIEW_LINES, PREVIEW_LINE_MAX, withinBudget, blobHandle, BLOB_HANDLE } from "./spill.js";
export type { SpillContext, Budget } from "./spill.js";
export { SqliteBlobStore } from "../store/sqlite-blob-store.js";
export { MAX_SUMMARY_LENGTH, MAX_TEMPLATE_LENGTH, parseTemplate, renderSummary, oneLine, cutText } from "./summary-template.js";
export type { TemplatePieces, ParsedTemplate } from "./summary-template.js";
export { BYTES_PER_TOKEN, estimateTokens } from "./token-estimate.js";
export { findTools, loadedTools, unloadedCall, toolFindText } from "./tool-find.js";
export type { ToolFindRecord, ToolFindOutcome } from "./tool-find.js";
export { MAX_GLOB_LENGTH, globProblem, globMatchesTool, globMatches } from "./tool-glob.js";
export type { ToolNames } from "./tool-glob.js";
export { Risk, riskFromAnnotations, toolRisk } from "./tool-risk.js";
export type { RiskOverride, RiskedTool } from "./tool-risk.js";
export type { DirectSessions, SessionFilter, SessionRecordView, SessionRef } from "./direct-sessions.js";
export { APPROVAL_EXPIRY_MS } from "./direct-session.js";
export { isSessionId, sessionRecordId } from "./session-journal.js";
