/**
 * Sandboxed user tools (issue 15): tools written in TypeScript by users or models, each call run
 * in a fresh QuickJS sandbox with no capability unless granted. Not wired into the engine yet:
 * the wiring provides a `SandboxFactory`, a `UserToolHost` (fetch through the `http` tool with
 * credential injection, tool invocation through the dispatcher, the namespace's workspace) and a
 * `SubCallJournal` (records each host call under `{run}/{seq}.{n}`; a replay reads them back).
 *
 * Entry points: `registerUserTool(spec, toolsetTools, checker)` → a `UserTool` (content-addressed
 * by `hash`) or every problem; `new UserToolRunner(sandboxes).call(tool, args, call)`.
 */

export { checkHttpGrant, type GrantCheck } from "./http-grant.js";
export { grantsProblems, normaliseGrants, type HttpGrant, type UserToolGrants } from "../toolset/user-tool-grants.js";
export { MemorySubCallJournal, type SubCall, type SubCallAnswer, type SubCallJournal, type UserToolHost } from "./user-tool-host.js";
export { DEFAULT_USER_TOOL_LIMITS, limitsProblems, type UserToolLimits } from "../toolset/user-tool-limits.js";
export { registerUserTool, WORKSPACE_GROUP, type Registration, type UserTool, type UserToolSpec } from "./user-tool-registration.js";
export { LIMIT_EXCEEDED, UserToolRunner, type UserToolCall, type UserToolOutcome } from "./user-tool-runner.js";
