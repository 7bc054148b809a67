/**
 * @tapedeck/engine: the durable script runtime. Everything exported here is public API;
 * nothing else is.
 */
export { Engine } from "./engine.js";
export type {
  EngineEvent,
  EngineLimits,
  EngineOptions,
  EngineSources,
  PendingDecision,
  RegisteredToolset,
  RegisterToolsetOptions,
  SaveToolOptions,
  SaveToolResult,
  SaveWorkflowOptions,
  SaveWorkflowResult,
  ToolTestResult,
  StartOptions,
  StartResult,
  TestOptions,
  TestResult,
} from "./engine.js";
export { EngineError, EngineErrorCode } from "./errors.js";
export type { ExecutionResult, RunPause } from "./runs/run-executor.js";
export type { RunEnd, RunEvent } from "@tapedeck/protocol";
export type { CassetteDocument, TestReport } from "./testing/test-script.js";
export type { TestCall } from "@tapedeck/protocol";
export { REPLAY_VERSION } from "./runs/history.js";
export type { VerifyResult } from "./runs/verify-replay.js";
export { PURGE_BATCH_SIZE } from "./runs/purge-runs.js";
export type { PurgeOptions, PurgeResult } from "./runs/purge-runs.js";
export type { EraseOptions, EraseResult } from "./runs/erase-namespace.js";
export type { Clock, VirtualTime } from "./clock.js";
export { systemClock, VirtualClock } from "./clock.js";
export type { CheckResult, Diagnostic } from "./script/diagnostic.js";
export type { Declarations } from "./toolset/declarations.js";
export type { McpAddresses, McpOverride } from "./toolset/pin-mcp.js";
export { SEARCH_LIMIT } from "./toolset/tool-search.js";
export { unknownToolset } from "./toolset/unknown-toolset.js";
export type { ToolSearchHit, ToolSearchOptions } from "./toolset/tool-search.js";
export { libraryDataTools } from "./library/library-data.js";
export type { HostToolContext, HostToolFunction, HostToolModule } from "./sources/in-process-host-tools.js";
export { InProcessHostTools } from "./sources/in-process-host-tools.js";
export type { QueueWatcher, ResumedCall, StagedAttempt, StagedCallRequest, ToolCallRequest, ToolOutcome, ToolSource } from "./sources/tool-source.js";
export type {
  ChangedRun,
  CreateRunResult,
  Durability,
  LeaseStore,
  NewRun,
  NewSignal,
  RecordedRunEvent,
  RunCaller,
  RunCounts,
  RunPatch,
  RunQuery,
  RunRecord,
  RunRequest,
  RunStore,
  SignalStore,
  Store,
  StoredSignal,
  ToolsetOwner,
  ToolsetStore,
  WebhookBinding,
  WebhookBindingStore,
  PurgeCounts,
  PurgeSelection,
  PurgeStore,
  ActiveRun,
  EraseCounts,
  EraseStore,
} from "./store/store.js";
export { runRequestsTopic } from "./store/lease-store.js";
export type {
  CatchupPolicy,
  FireKind,
  FirePatch,
  FireRecord,
  FireState,
  NewFire,
  OverlapPolicy,
  ScheduleAction,
  SchedulePolicies,
  ScheduleQuery,
  ScheduleRecord,
  ScheduleStore,
  ScheduleTiming,
} from "./store/schedule-store.js";
export { Schedules, UPCOMING, MAX_BACKFILL } from "./schedules/schedules.js";
export type { CreateScheduleResult, Schedule } from "./schedules/schedules.js";
export type { ScheduleOptions } from "./schedules/schedule-options.js";
export { MIN_INTERVAL_MS, DEFAULT_CATCHUP_WINDOW_MS } from "./schedules/schedule-options.js";
export type { FireOutcome } from "./schedules/schedule-firer.js";
export { FIRE_TAKEOVER_MS, SCHEDULE_POLL_MS } from "./schedules/schedule-firer.js";
export { fireKey, SCHEDULE_LABEL } from "./schedules/fire-key.js";
export { RUN_CHANGES_TOPIC, runJournalTopic } from "./store/run-topics.js";
export type { Notifier } from "./store/notifier.js";
export { LOCAL_POLL_MS, LocalNotifier } from "./store/local-notifier.js";
export type {
  HostTaskAnswer,
  HostTaskAudience,
  HostTaskFilter,
  HostTaskRecord,
  HostTaskState,
  HostTaskStore,
  LeaseAnswer,
  NewHostTask,
} from "./store/host-task-store.js";
export { audienceMatches, HOST_TASKS_TOPIC, hostTaskWaiterTopic } from "./store/host-task-store.js";
export { StoreConflictError } from "./store/store.js";
export { openStore } from "./store/open-store.js";
export type { OpenStoreOptions } from "./store/open-store.js";
export { SqliteStore } from "./store/sqlite-store.js";
export type { SqliteStoreOptions } from "./store/sqlite-store.js";
export { PostgresStore } from "./store/postgres/postgres-store.js";
export type { PostgresStoreOptions } from "./store/postgres/postgres-store.js";
export type { Sandbox, SandboxFactory, SandboxLimits, SandboxOptions, SandboxPool } from "./sandbox/sandbox.js";
export { QuickJsSandboxFactory } from "./sandbox/quickjs-sandbox-factory.js";
export { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
export { HttpToolSource } from "./sources/http/http-tool-source.js";
export type { HttpToolOptions } from "./sources/http/http-tool-source.js";
export type { HostResolver } from "./sources/http/resolver.js";
export { HostTaskQueue, MAX_POLL_MS, toolMatcher } from "./sources/host-task-queue.js";
export { HostTaskArgs, hostTaskArgsFor } from "./sources/host-task-args.js";
export type { HostTaskQueueOptions } from "./sources/host-task-queue.js";
export { PollTimes } from "./sources/poll-times.js";
export type { HostTask, PollRequest } from "./sources/host-task-queue.js";
export { formatDuration, parseDuration } from "./util/duration.js";
export { closeAll } from "./util/close-all.js";
export { CredentialVault } from "./secrets/vault.js";
export type { CredentialContext, CredentialResolution, SetCredential } from "./secrets/vault.js";
export { CREDENTIAL_KINDS, describeScope } from "./secrets/credential.js";
export { credentialReach } from "./secrets/credential-reach.js";
export type { CredentialReach } from "./secrets/credential-reach.js";
export type { CredentialInfo, CredentialKind, CredentialScope, CredentialSecret } from "./secrets/credential.js";
export { MASTER_KEY_ENV, MasterKeySource } from "./secrets/master-key.js";
export type { MasterKeyOptions } from "./secrets/master-key.js";
export type { CredentialStore, SealedCredential } from "./store/credential-store.js";
export { canonicalJson } from "./util/canonical-json.js";
export type { DirectSessions, SessionFilter, SessionRecordView, SessionRef } from "./direct/direct-sessions.js";
export { isSessionId } from "./direct/session-journal.js";
export { TapedeckIdGenerator } from "./telemetry/id-generator.js";
export { observeEngines } from "./telemetry/engine-observers.js";
export type { CallEnded, EngineObserver } from "./telemetry/engine-observers.js";
