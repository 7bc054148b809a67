/**
 * @tapedeck/protocol/api: the wire format of Tapedeck's HTTP API (`/v1`): what each route takes
 * and answers, as TypeScript types (the SDK's and the server handlers') and as the JSON Schemas
 * the server validates requests with and publishes at `GET /openapi.json`, each checked against
 * its type when it compiles (`schema-for.ts`), so client and server cannot drift apart. Times are
 * milliseconds since the epoch, as in the journal. Everything exported here is public API.
 */
export { schemaFor } from "./schema-for.js";
export type { JsonSchemaObject, SchemaMismatch } from "./schema-for.js";
export { JOURNAL_LIMIT, LABELS, LIST_LIMIT, MAX_WAIT_SECONDS, NAMESPACE_MAX_LENGTH, TOKEN_TTL_SECONDS } from "./limits.js";
export { anyJson, deleted, id, idempotencyKey, jsonSchema, traceparent } from "./fields.js";
export type { Deleted } from "./fields.js";
export { labels, NAMESPACE_HEADER, namespace } from "./labels.js";
export { NAMESPACE_FORMAT, namespaceError, namespaceProblem, quoteNamespace } from "./namespace-name.js";
export type { Labels } from "./labels.js";
export { ApiErrorCode, errorBody } from "./errors.js";
export type { ApiErrorBody } from "./errors.js";
export { diagnostic } from "./diagnostic.js";
export type { Diagnostic } from "./diagnostic.js";
export {
  createToolsetRequest,
  declarations,
  registeredToolset,
  savedWorkflow,
  saveWorkflowRequest,
  SEARCH_QUERY_MAX_LENGTH,
  toolSearchQuery,
  toolSearchResult,
  toolsetInfo,
  toolsetParams,
} from "./toolsets.js";
export type {
  CreateToolsetRequest,
  Declarations,
  RegisteredToolset,
  SavedWorkflow,
  SaveWorkflowRequest,
  ToolSearchHit,
  ToolSearchQuery,
  ToolSearchResult,
  ToolsetInfo,
  ToolsetParams,
} from "./toolsets.js";
export { savedTool, saveToolRequest } from "./user-tools.js";
export type { SavedTool, SaveToolRequest, ToolTestCase, ToolTestResult } from "./user-tools.js";
export { checkRequest, checkResult, testReport, testRequest } from "./scripts.js";
export type { CheckRequest, CheckResult, TestCall, TestReport, TestRequest } from "./scripts.js";
export { getRunQuery, runListQuery, run, runIdParams, runList, runStatus } from "./runs.js";
export { eventsQuery, runEventsQuery } from "./events.js";
export type { ChangeStreamEvent, EventsLost, EventsQuery, RunEventsQuery, RunStreamEvent } from "./events.js";
export type { GetRunQuery, RunListQuery, Run, RunIdParams, RunList } from "./runs.js";
export { forkRunRequest, startedRun, startRunRequest, ttl } from "./run-starts.js";
export type { ForkRunRequest, StartedRun, StartRunRequest } from "./run-starts.js";
export { cancelRunRequest, REASON_MAX_LENGTH, signalRequest, signalResult } from "./run-actions.js";
export type { CancelRunRequest, SignalRequest, SignalResult } from "./run-actions.js";
export { journalEntry, journalEntryParams, journalPage, journalQuery, outputQuery, runOutputPage } from "./run-pieces.js";
export type { JournalEntryParams, JournalPage, JournalQuery, OutputQuery, RunOutputPage } from "./run-pieces.js";
export { approvalList, approvalsQuery, callParams, decisionRequest } from "./approvals.js";
export type { ApprovalList, ApprovalsQuery, CallParams, DecisionRequest, PendingApproval } from "./approvals.js";
export { createTokenRequest, issuedToken } from "./tokens.js";
export type { CreateTokenRequest, IssuedToken } from "./tokens.js";
export {
  completeTaskRequest,
  failTaskRequest,
  heartbeatRequest,
  hostTask,
  leaseAnswer,
  MAX_POLL_WAIT_MS,
  polledTasks,
  pollTasksRequest,
  taskParams,
} from "./tasks.js";
export type {
  CompleteTaskRequest,
  FailTaskRequest,
  HeartbeatRequest,
  HostTask,
  LeaseAnswer,
  LeaseStatus,
  PolledTasks,
  PollTasksRequest,
  TaskParams,
} from "./tasks.js";
export { WEBHOOK_OUTPUT_LIMIT_BYTES, WebhookEventType, WebhookHeader } from "./webhook-events.js";
export type { WebhookEvent, WebhookEventData, WebhookRunData } from "./webhook-events.js";
export {
  createdWebhookEndpoint,
  createWebhookRequest,
  DELIVERIES_LIMIT,
  deliveriesQuery,
  webhookDelivery,
  webhookDeliveryList,
  webhookEndpoint,
  webhookEndpointList,
  webhookEndpointParams,
  webhookEventType,
} from "./webhooks.js";
export type {
  CreatedWebhookEndpoint,
  CreateWebhookRequest,
  DeliveriesQuery,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointParams,
} from "./webhooks.js";
export {
  CREDENTIAL_KINDS,
  credential,
  credentialList,
  credentialParams,
  credentialScopeQuery,
  rotatedKey,
  rotateKeyRequest,
  setCredentialRequest,
} from "./credentials.js";
export type {
  Credential,
  CredentialKind,
  CredentialList,
  CredentialParams,
  CredentialScopeFields,
  CredentialValues,
  DeleteCredentialRequest,
  RotatedKey,
  RotateKeyRequest,
  SetCredentialRequest,
} from "./credentials.js";
export { healthStatus } from "./health.js";
export type { HealthStatus } from "./health.js";
export { hookDelivered, hookParams } from "./hooks.js";
export type { HookDelivered, HookParams } from "./hooks.js";
export {
  bindRequest,
  blobPageAnswer,
  blobParams,
  blobQuery,
  boundSession,
  ModelApi,
  SESSION_NAME_MAX_LENGTH,
  sessionApproval,
  sessionApprovalList,
  sessionCallParams,
  sessionDecision,
  sessionDecisionRequest,
  sessionParams,
  TOOL_CALL_ID_MAX_LENGTH,
  toolCallAnswer,
  toolCallRequest,
} from "./sessions.js";
export type {
  ApprovalPolicy,
  ApprovalRule,
  ArgumentTest,
  BindRequest,
  BlobPageAnswer,
  BlobParams,
  BlobQuery,
  BoundSession,
  DirectResultBudget,
  DirectToolDefinition,
  DirectToolOptions,
  SessionApproval,
  SessionApprovalList,
  SessionCallParams,
  SessionDecision,
  SessionDecisionRequest,
  SessionParams,
  SessionTools,
  ToolCallAnswer,
  ToolCallRequest,
} from "./sessions.js";
export { purgedRuns, purgeRunsRequest } from "./retention.js";
export type { PurgedRuns, PurgeRunsRequest } from "./retention.js";
export {
  backfillRequest,
  createScheduleRequest,
  fire,
  fireList,
  FIRES_LIMIT,
  firesQuery,
  schedule,
  scheduleList,
  scheduleListQuery,
  scheduleParams,
  SCHEDULES_LIMIT,
} from "./schedules.js";
export type {
  BackfillRequest,
  CatchupPolicy,
  CreateScheduleRequest,
  Fire,
  FireKind,
  FireList,
  FiresQuery,
  FireState,
  OverlapPolicy,
  Schedule,
  ScheduleList,
  ScheduleListQuery,
  ScheduleParams,
} from "./schedules.js";
export { erasedNamespace, eraseNamespaceParams, eraseNamespaceQuery } from "./erasure.js";
export type { ErasedNamespace, EraseNamespaceParams, EraseNamespaceQuery } from "./erasure.js";
