/**
 * The built-in tool library (issue 15): tools the engine runs itself, each a `LibraryTool` — the
 * one tool contract (`tool-definition.ts`, data) plus `execute` with only the capabilities it
 * names. The engine offers the groups a toolset enables (`"library": { … }`) through the
 * `library` tool source (`library-tool-source.ts`), pinned by `pin-library.ts`.
 *
 * What exists:
 * - contract: `ToolDefinition`, `definitionProblems`; approval as data (`Approval`,
 *   `decideApproval`, `approvalProblems`); `redactSensitive` for `sensitiveParams`;
 *   `LibraryTool`, `ToolContext`, `callLibraryTool`.
 * - groups (`libraryGroupTools`): echo (`echo`), time (`now`), json (`parse`, `stringify`,
 *   `query`, `validate`), web (`fetch`), files (`read`, `write`, `list`, `patch`), shell
 *   (`run`), memory (`write`, `read`, `tree`, `search`).
 * - what the engine supplies them: `Workspace` (files, shell), a `GuardedFetch` (web), a
 *   `MemorySpace` over a `MemoryStore` (SQLite: `SqliteMemoryStore`) with an optional
 *   `Embedder` (`openAiEmbedder`), a `ShellSandbox` from `probeShell`.
 * - rate limits: `checkRateLimit` over a `RateLimitStore` (SQLite: `SqliteRateLimitStore`).
 * - `LIBRARY_PROTECTED_NAMES` for the registry.
 */

export {
  approvalProblems,
  decideApproval,
  type Approval,
  type ApprovalDecision,
  type ApprovalRule,
  type ArgumentTest,
  type PlainApproval,
} from "../toolset/approval.js";
export { callLibraryTool } from "./call-library-tool.js";
export { openAiEmbedder, type Embedder, type EmbeddingsFetch } from "./memory/embeddings.js";
export { Workspace, workspaceSupport, type WorkspaceMode } from "./files/workspace.js";
export {
  LIBRARY_GROUP_NAMES,
  LIBRARY_PROTECTED_NAMES,
  libraryGroupTools,
  type LibraryGroupName,
  type LibraryGroupOptions,
  type LibraryHost,
} from "./library-groups.js";
export type { Capabilities, Capability, LibraryTool, ToolContext, ToolResult } from "./library-tool.js";
export { MemorySpace } from "./memory/memory-space.js";
export type { MemoryStore } from "./memory/memory-store.js";
export { MEMORY_SCHEMA, SqliteMemoryStore } from "./memory/sqlite-memory-store.js";
export { checkRateLimit, rateLimitKey, rateWindows, type RateCheck, type RateLimitKey } from "./rate-limit/rate-limiter.js";
export type { RateLimitStore, RateWindow, TakeOutcome } from "../store/rate-limit-store.js";
export { RATE_LIMIT_SCHEMA, SqliteRateLimitStore } from "../store/sqlite-rate-limit-store.js";
export { redactSensitive, sensitiveParamsProblems } from "../toolset/sensitive-params.js";
export { probeShell, type ShellProbe, type ShellSetup } from "./shell/shell-probe.js";
export { DEFAULT_SHELL_LIMITS, type ShellLimits } from "./shell/shell-limits.js";
export { ShellSandbox, type ShellSandboxOptions } from "./shell/shell-sandbox.js";
export { definitionProblems, type RateLimit, type Risk, type ToolDefinition } from "./tool-definition.js";
export type { FetchedResponse, FetchOutcome, FetchRequest, GuardedFetch } from "./web/guarded-fetch.js";
