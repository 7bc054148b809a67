/**
 * @tapedeck/engine: the durable script runtime. Everything exported here is public API;
 * nothing else is.
 */
export { Engine } from "./engine.js";
export type { EngineEvent, EngineLimits, EngineOptions, PendingDecision, RegisteredToolset, StartOptions, StartResult, TestOptions, TestResult } from "./engine.js";
export { EngineError, EngineErrorCode } from "./errors.js";
export type { ExecutionResult, RunEnd, RunPause } from "./runs/run-executor.js";
export type { CassetteDocument, TestCall, TestReport } from "./testing/test-script.js";
export { REPLAY_VERSION } from "./runs/run-executor.js";
export type { VerifyResult } from "./runs/verify-replay.js";
export type { Clock, VirtualTime } from "./clock.js";
export { systemClock, VirtualClock } from "./clock.js";
export type { CheckResult, Diagnostic } from "./script/diagnostic.js";
export type { Declarations } from "./toolset/declarations.js";
export type { McpOverride } from "./toolset/pin-mcp.js";
export type { HostToolContext, HostToolFunction, HostToolModule } from "./sources/in-process-host-tools.js";
export { InProcessHostTools } from "./sources/in-process-host-tools.js";
export type { ToolCallRequest, ToolOutcome, ToolSource } from "./sources/tool-source.js";
export type { ApiKeyRecord, Durability, NewRun, RunPatch, RunQuery, RunRecord, Store } from "./store/store.js";
export type { DeliveryNext, DeliveryStatus, NewWebhookDelivery, WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookOutboxStore } from "./store/webhook-outbox.js";
export { StoreConflictError } from "./store/store.js";
export { SqliteStore } from "./store/sqlite-store.js";
export type { SqliteStoreOptions } from "./store/sqlite-store.js";
export type { Sandbox, SandboxFactory, SandboxLimits, SandboxOptions } from "./sandbox/sandbox.js";
export { QuickJsSandboxFactory } from "./sandbox/quickjs-sandbox-factory.js";
export { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
export { HttpToolSource } from "./sources/http/http-tool-source.js";
export type { HttpToolOptions } from "./sources/http/http-tool-source.js";
export type { HostResolver } from "./sources/http/resolver.js";
export { HostTaskQueue, MAX_POLL_MS } from "./sources/host-task-queue.js";
export type { HostTask, LeaseAnswer, PollRequest } from "./sources/host-task-queue.js";
export { formatDuration, parseDuration } from "./util/duration.js";
export { canonicalJson } from "./util/canonical-json.js";
