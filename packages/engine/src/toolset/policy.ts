import type { PolicySpec, ToolPolicy } from "@tapedeck/protocol";
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, RUN_CONCURRENCY } from "../limits.js";
import { parseDuration } from "../util/duration.js";

export const DEFAULT_POLICY: ToolPolicy = {
  onInterruption: "retry",
  timeoutMs: DEFAULT_TIMEOUT_MS,
  heartbeatTimeoutMs: DEFAULT_HEARTBEAT_TIMEOUT_MS,
  concurrency: RUN_CONCURRENCY,
  approval: false,
};

/**
 * The policy of `group.name`: the defaults, then `group.*`, then `group.name`, each field
 * overriding the one before. A tool's source may give its own defaults (MCP annotations).
 */
export function resolvePolicy(
  group: string,
  name: string,
  policies: Readonly<Record<string, PolicySpec>>,
  sourceDefaults: Partial<ToolPolicy> = {},
): ToolPolicy {
  let policy: ToolPolicy = { ...DEFAULT_POLICY, ...sourceDefaults };
  for (const key of [`${group}.*`, `${group}.${name}`]) {
    const spec = policies[key];
    if (spec) policy = applySpec(policy, spec, key);
  }
  return policy;
}

function applySpec(policy: ToolPolicy, spec: PolicySpec, key: string): ToolPolicy {
  return {
    onInterruption: spec.onInterruption ?? policy.onInterruption,
    timeoutMs: spec.timeout === undefined ? policy.timeoutMs : parseDuration(spec.timeout, `policies["${key}"].timeout`),
    heartbeatTimeoutMs:
      spec.heartbeatTimeout === undefined
        ? policy.heartbeatTimeoutMs
        : parseDuration(spec.heartbeatTimeout, `policies["${key}"].heartbeatTimeout`),
    concurrency: Math.min(spec.concurrency ?? policy.concurrency, RUN_CONCURRENCY),
    approval: spec.approval ?? policy.approval,
  };
}
