import {
  runBudgetProblems,
  type HostToolSpec,
  type JsonSchema,
  type PolicySpec,
  type RunBudget,
  type ToolRateLimit,
  type ToolsetSpec,
} from "@tapedeck/protocol";
import { parseDuration } from "../util/duration.js";
import { nullObject } from "../util/null-object.js";
import { parseHttpSpec } from "./http-spec-file.js";
import { approvalProblems, type Approval } from "./approval.js";
import { parseLibrarySpec } from "./library-spec-file.js";
import { rateLimitProblems } from "./rate-limit-spec.js";
import { checkSensitiveParams } from "./sensitive-params-spec.js";
import { literalSecretRefusal } from "./literal-secrets.js";
import { parseMcpServers } from "./mcp-servers-file.js";
import { checkGroupName, checkToolName, ToolsetSpecError } from "./spec-error.js";
import { parseUserToolsSpec } from "./user-tools-spec-file.js";

export { ToolsetSpecError } from "./spec-error.js";

/**
 * Reads a toolset file's JSON into a `ToolsetSpec`, checking everything a person could get
 * wrong, so a bad file fails at registration with a message that says where and what to do,
 * never later inside a run. A file holding a literal secret anywhere is refused
 * (`literal-secrets.ts`): a toolset is readable by whoever knows its id.
 */

const TOP_LEVEL_KEYS = ["base", "mcpServers", "hostTools", "http", "library", "userTools", "policies", "budget"] as const;
const POLICY_KEYS = [
  "onInterruption",
  "timeout",
  "heartbeatTimeout",
  "queueTimeout",
  "concurrency",
  "approval",
  "risk",
  "rateLimit",
  "sensitiveParams",
] as const;
const HOST_TOOL_KEYS = ["description", "inputSchema", "outputSchema"] as const;

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkKeys(value: Obj, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new ToolsetSpecError(`${where} has an unknown key "${key}"; allowed keys: ${allowed.join(", ")}`);
    }
  }
}

function checkSchema(value: unknown, where: string): JsonSchema | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "boolean" || isObject(value)) return value as JsonSchema;
  throw new ToolsetSpecError(`${where} must be a JSON Schema (an object or a boolean)`);
}

function parseHostTool(value: unknown, where: string): HostToolSpec {
  if (!isObject(value)) throw new ToolsetSpecError(`${where} must be an object with description, inputSchema and outputSchema`);
  checkKeys(value, HOST_TOOL_KEYS, where);
  if (value.description !== undefined && typeof value.description !== "string") {
    throw new ToolsetSpecError(`${where}.description must be a string`);
  }
  const inputSchema = checkSchema(value.inputSchema, `${where}.inputSchema`);
  const outputSchema = checkSchema(value.outputSchema, `${where}.outputSchema`);
  return {
    ...(value.description === undefined ? {} : { description: value.description }),
    ...(inputSchema === undefined ? {} : { inputSchema }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
  };
}

function parseHostTools(value: unknown): ToolsetSpec["hostTools"] {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ToolsetSpecError(`hostTools must be an object: { "<group>": { "<name>": { … } } }`);
  const groups: Record<string, Record<string, HostToolSpec>> = nullObject();
  for (const [group, tools] of Object.entries(value)) {
    checkGroupName(group, "hostTools");
    if (!isObject(tools)) throw new ToolsetSpecError(`hostTools.${group} must be an object of tools by name`);
    const byName: Record<string, HostToolSpec> = nullObject();
    for (const [name, tool] of Object.entries(tools)) {
      if (name.length === 0) throw new ToolsetSpecError(`hostTools.${group} has a tool with an empty name`);
      checkToolName(name, `hostTools.${group}`, " (as MCP tool names)");
      byName[name] = parseHostTool(tool, `hostTools.${group}["${name}"]`);
    }
    groups[group] = byName;
  }
  return groups;
}

function parsePolicy(value: unknown, where: string): PolicySpec {
  if (!isObject(value)) throw new ToolsetSpecError(`${where} must be an object`);
  checkKeys(value, POLICY_KEYS, where);
  const { onInterruption, timeout, heartbeatTimeout, queueTimeout, concurrency, approval, risk, rateLimit, sensitiveParams } = value;
  if (onInterruption !== undefined && onInterruption !== "retry" && onInterruption !== "at_most_once") {
    throw new ToolsetSpecError(`${where}.onInterruption must be "retry" or "at_most_once"`);
  }
  for (const [key, duration] of [
    ["timeout", timeout],
    ["heartbeatTimeout", heartbeatTimeout],
    ["queueTimeout", queueTimeout],
  ] as const) {
    if (duration === undefined) continue;
    if (typeof duration !== "string" && typeof duration !== "number") throw new ToolsetSpecError(`${where}.${key} must be a duration such as "30s"`);
    try {
      parseDuration(duration, `${where}.${key}`);
    } catch (error) {
      throw new ToolsetSpecError((error as Error).message);
    }
  }
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || (concurrency as number) < 1)) {
    throw new ToolsetSpecError(`${where}.concurrency must be a positive integer`);
  }
  if (approval !== undefined && typeof approval !== "boolean") {
    if (typeof approval !== "object" || approval === null || Array.isArray(approval))
      throw new ToolsetSpecError(
        `${where}.approval must be true, false or an approval such as { "kind": "rules", "rules": [ … ], "otherwise": { "kind": "never" } }`,
      );
    const problems = shapeProblems(() => approvalProblems(approval as Approval).map((p) => `approval.${p}`));
    if (problems.length > 0) throw new ToolsetSpecError(`${where}.approval is malformed: ${problems.join("; ")}`);
  }
  if (risk !== undefined && risk !== "low" && risk !== "medium" && risk !== "high")
    throw new ToolsetSpecError(`${where}.risk must be "low", "medium" or "high"`);
  const limit = rateLimitProblems(rateLimit as ToolRateLimit | undefined, `${where}.rateLimit`);
  if (limit.length > 0) throw new ToolsetSpecError(limit.join("; "));
  checkSensitiveParams(sensitiveParams, where);
  return value;
}

/** The problems `check` finds, or the one a value of the wrong shape makes it stumble on (a string where rules are). */
function shapeProblems(check: () => readonly string[]): readonly string[] {
  try {
    return check();
  } catch {
    return [
      'it does not have the shape of an approval: { "kind": "rules", "rules": [{ "action": "ask", "when": [ … ], "reason": "…" }], "otherwise": { "kind": "never" } }',
    ];
  }
}

/** Parses and checks a toolset file's content. Throws `ToolsetSpecError`. */
export function parseToolsetSpec(value: unknown): ToolsetSpec {
  if (!isObject(value)) throw new ToolsetSpecError('a toolset must be a JSON object such as { "hostTools": { … } }');
  // First: the messages below quote some values, and a secret must never be in an error.
  const secret = literalSecretRefusal(value);
  if (secret !== undefined) throw new ToolsetSpecError(secret);
  checkKeys(value, TOP_LEVEL_KEYS, "the toolset");
  const hostTools = parseHostTools(value.hostTools);
  const mcpServers = parseMcpServers(value.mcpServers);
  for (const group of Object.keys(mcpServers ?? {})) {
    if (hostTools !== undefined && Object.hasOwn(hostTools, group))
      throw new ToolsetSpecError(`"${group}" is both an MCP server and a host tool group; give them different names`);
  }
  const userTools = parseUserToolsSpec(value.userTools);
  for (const group of Object.keys(userTools ?? {})) {
    if ((hostTools !== undefined && Object.hasOwn(hostTools, group)) || (mcpServers !== undefined && Object.hasOwn(mcpServers, group)))
      throw new ToolsetSpecError(`"${group}" is both a user tool group and a host tool group or MCP server; give them different names`);
  }
  // No group can be named `http` (a protected name), so the built-in's group is always free.
  const http = parseHttpSpec(value.http);
  // Its groups' names are protected (`protected-names.ts`): no MCP server or host tool group has one.
  const library = parseLibrarySpec(value.library);
  if (library?.web !== undefined && http === undefined) {
    throw new ToolsetSpecError(
      'library.web fetches pages under the rules of the toolset\'s http tool, and this toolset has none: add "http": { "allow": ["<host>", …] } with the hosts web.fetch may reach',
    );
  }
  const policies: Record<string, PolicySpec> = nullObject();
  if (value.policies !== undefined) {
    if (!isObject(value.policies)) throw new ToolsetSpecError(`policies must be an object: { "<group>.<name>": { … } }`);
    for (const [key, policy] of Object.entries(value.policies)) policies[key] = parsePolicy(policy, `policies["${key}"]`);
  }
  if (value.base !== undefined && (typeof value.base !== "string" || !/^ts_[0-9a-f]{64}$/.test(value.base))) {
    throw new ToolsetSpecError(`base must be the id of a registered toolset ("ts_" and 64 hex digits), got ${JSON.stringify(value.base)}`);
  }
  const base = value.base;
  const budgetProblems = value.budget === undefined ? [] : runBudgetProblems(value.budget);
  if (budgetProblems.length > 0) throw new ToolsetSpecError(budgetProblems.join("; "));
  const budget = value.budget as RunBudget | undefined;
  return {
    ...(base ? { base } : {}),
    ...(budget ? { budget } : {}),
    ...(mcpServers ? { mcpServers } : {}),
    ...(hostTools ? { hostTools } : {}),
    ...(http ? { http } : {}),
    ...(library ? { library } : {}),
    ...(userTools ? { userTools } : {}),
    policies,
  };
}

/** Every policy key must name a tool (or `group.*` a group) of the toolset: a typo would silently apply nothing. */
export function checkPolicyTargets(policies: Readonly<Record<string, PolicySpec>>, tools: readonly { group: string; name: string }[]): void {
  const names = new Set(tools.map((t) => `${t.group}.${t.name}`));
  const groups = new Set(tools.map((t) => t.group));
  for (const key of Object.keys(policies)) {
    const star = key.endsWith(".*") ? key.slice(0, -2) : undefined;
    if (star !== undefined ? groups.has(star) : names.has(key)) continue;
    throw new ToolsetSpecError(
      `policies["${key}"] names no tool of this toolset; write "<group>.<name>" or "<group>.*" (tools: ${[...names].sort().join(", ") || "none"})`,
    );
  }
}
