/**
 * Sandboxed user tools (issue 15): tools written in TypeScript (or WebAssembly, as Extism
 * plugins) by users or models, each call run in a fresh sandbox with no capability unless
 * granted. The engine offers them as the `user` tool source (`user-tool-source.ts`): toolsets
 * declare them in `userTools`, `save_tool` saves them (`save-tool.ts`), and each host call they
 * make is a `call.sub` entry of the run's journal (`runs/run-sub-calls.ts`).
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
