import type { PolicySpec, ToolPolicy } from "@tapedeck/protocol";
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, RUN_CONCURRENCY } from "../limits.js";
import { parseDuration } from "../util/duration.js";
import { ToolsetSpecError } from "./spec-error.js";

/** The defaults of MCP tools and built-ins: an attempt may take 5 minutes (seed 000). */
export const DEFAULT_POLICY: ToolPolicy = {
  onInterruption: "retry",
  timeoutMs: DEFAULT_TIMEOUT_MS,
  heartbeatTimeoutMs: DEFAULT_HEARTBEAT_TIMEOUT_MS,
  concurrency: RUN_CONCURRENCY,
  approval: false,
};

/**
 * The defaults of host tools: no attempt timeout (a worker that took the call heartbeats, and a
 * missed heartbeat is an interruption) and no limit on the wait for a worker, which is not an
 * attempt: a run whose worker is down waits for it, and says so.
 */
export const HOST_DEFAULT_POLICY: ToolPolicy = {
  onInterruption: "retry",
  heartbeatTimeoutMs: DEFAULT_HEARTBEAT_TIMEOUT_MS,
  concurrency: RUN_CONCURRENCY,
  approval: false,
};

/**
 * The policy of `group.name`: the defaults, then `group.*`, then `group.name`, each field
 * overriding the one before. A tool's source may give its own defaults (MCP annotations).
 * `queueTimeout` is refused here: only host tools wait for a worker (`resolveHostPolicy`).
 */
export function resolvePolicy(
  group: string,
  name: string,
  policies: Readonly<Record<string, PolicySpec>>,
  sourceDefaults: Partial<ToolPolicy> = {},
): ToolPolicy {
  return resolve({ ...DEFAULT_POLICY, ...sourceDefaults }, group, name, policies, false);
}

/** The policy of host tool `group.name`, from `HOST_DEFAULT_POLICY`. */
export function resolveHostPolicy(group: string, name: string, policies: Readonly<Record<string, PolicySpec>>): ToolPolicy {
  return resolve(HOST_DEFAULT_POLICY, group, name, policies, true);
}

function resolve(defaults: ToolPolicy, group: string, name: string, policies: Readonly<Record<string, PolicySpec>>, host: boolean): ToolPolicy {
  let policy = defaults;
  for (const key of [`${group}.*`, `${group}.${name}`]) {
    const spec = policies[key];
    if (!spec) continue;
    if (spec.queueTimeout !== undefined && !host) {
      throw new ToolsetSpecError(
        `policies["${key}"].queueTimeout: ${group}.${name} is not a host tool; only host tools wait for a worker to take their calls (use timeout for an attempt's length)`,
      );
    }
    policy = applySpec(policy, spec, key);
  }
  return policy;
}

function applySpec(policy: ToolPolicy, spec: PolicySpec, key: string): ToolPolicy {
  const timeoutMs = spec.timeout === undefined ? policy.timeoutMs : parseDuration(spec.timeout, `policies["${key}"].timeout`);
  const queueTimeoutMs = spec.queueTimeout === undefined ? policy.queueTimeoutMs : parseDuration(spec.queueTimeout, `policies["${key}"].queueTimeout`);
  // `true`/`false` replace the tool's approval rules; rules replace its plain approval.
  const approval =
    spec.approval === undefined
      ? { approval: policy.approval, ...(policy.approvalRules === undefined ? {} : { approvalRules: policy.approvalRules }) }
      : typeof spec.approval === "boolean"
        ? { approval: spec.approval }
        : { approval: false, approvalRules: spec.approval };
  const rateLimit = spec.rateLimit ?? policy.rateLimit;
  // Pointers add up: a tool's own, its group's and its own policy's (a narrower policy never un-redacts).
  const sensitiveParams = mergeSensitiveParams(policy.sensitiveParams, spec.sensitiveParams);
  return {
    onInterruption: spec.onInterruption ?? policy.onInterruption,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    heartbeatTimeoutMs:
      spec.heartbeatTimeout === undefined ? policy.heartbeatTimeoutMs : parseDuration(spec.heartbeatTimeout, `policies["${key}"].heartbeatTimeout`),
    ...(queueTimeoutMs === undefined ? {} : { queueTimeoutMs }),
    concurrency: Math.min(spec.concurrency ?? policy.concurrency, RUN_CONCURRENCY),
    ...approval,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    ...(sensitiveParams === undefined ? {} : { sensitiveParams }),
  };
}

/** The union of two pointer lists, sorted (the toolset id must not depend on the order they were written in); undefined when empty. */
export function mergeSensitiveParams(a: readonly string[] | undefined, b: readonly string[] | undefined): readonly string[] | undefined {
  const merged = [...new Set([...(a ?? []), ...(b ?? [])])].sort();
  return merged.length === 0 ? undefined : merged;
}

/** The risk the toolset's policies give `group.name` (`group.name` over `group.*`), if they give one. */
export function resolveRisk(group: string, name: string, policies: Readonly<Record<string, PolicySpec>>): PolicySpec["risk"] {
  return policies[`${group}.${name}`]?.risk ?? policies[`${group}.*`]?.risk;
}
