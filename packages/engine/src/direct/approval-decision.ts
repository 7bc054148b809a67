import type { JsonValue } from "@tapedeck/protocol";
import { argumentTestHolds } from "../toolset/argument-test.js";
import { STAGES, type CompiledPolicy, type CompiledRule } from "./approval-policy.js";
import { renderSummary } from "./summary-template.js";
import { globMatchesTool, type ToolNames } from "./tool-glob.js";
import { toolRisk, type Risk, type RiskedTool } from "./tool-risk.js";

/**
 * What a policy decides for one call: deny → (sticky approvals) → ask → allow, first matching rule
 * of a stage wins; then `unmatched`. A pure function of the policy, the call and the session's
 * sticky approvals, so it can be evaluated again on replay and give the same answer.
 *
 * Invariants:
 * - Total: never throws. A rule that cannot be evaluated (broken when checked, a text too long for
 *   its regular expression, anything unexpected) denies the call, naming the rule and why.
 * - A tool whose toolset policy requires approval (`policy.approval`) is never allowed without a
 *   human: what would be allowed asks instead. Only deny rules and sticky approvals come first.
 * - Risk comes from the override, the pinned risk or the annotations (`tool-risk.ts`) and only
 *   chooses between allow and ask for unmatched calls: it never denies, never skips a rule.
 */

export interface ApprovalCall {
  readonly names: ToolNames;
  readonly args: JsonValue;
  /** The arguments the summary quotes, when they differ from `args` (the tool's `sensitiveParams` hashed). Default `args`. */
  readonly shownArgs?: JsonValue;
  readonly tool: RiskedTool;
  /** The toolset's policy for this tool says calls wait for approval (`PinnedTool.policy.approval`). */
  readonly toolsetRequiresApproval?: boolean;
}

export interface ApprovalContext {
  /** Tool paths a human approved "always, for this session". Deny rules still apply to them. */
  readonly sticky?: ReadonlySet<string>;
}

/** Who decided. */
export type DecidedBy =
  /** A rule of the policy (`ruleId`). */
  | "rule"
  /** No rule matched: `unmatched` (and the tool's risk, for `byRisk`). */
  | "unmatched"
  /** A human's "always for this session" approval of this tool. */
  | "sticky"
  /** The toolset's own policy for the tool requires approval. */
  | "toolset"
  /** A rule that could not be evaluated (`ruleId`). */
  | "broken";

export type ApprovalDecision =
  /** Send the call. */
  | { readonly verdict: "allow"; readonly by: "rule" | "unmatched" | "sticky"; readonly ruleId?: string; readonly risk: Risk; readonly reason: string }
  /** Wait for a human; `summary` is their one line (≤ 200 characters). */
  | {
      readonly verdict: "ask";
      readonly by: "rule" | "unmatched" | "toolset";
      readonly ruleId?: string;
      readonly risk: Risk;
      readonly reason: string;
      readonly summary: string;
    }
  /** Do not send the call: the model gets a result saying so. */
  | { readonly verdict: "deny"; readonly by: "rule" | "broken"; readonly ruleId: string; readonly risk: Risk; readonly reason: string };

type RuleOutcome = { readonly applies: false } | { readonly applies: true } | { readonly broken: string };

export function decideApproval(policy: CompiledPolicy, call: ApprovalCall, context: ApprovalContext = {}): ApprovalDecision {
  const risk = toolRisk(call.tool, call.names, policy.risk);
  for (const stage of STAGES) {
    if (stage === "ask" && context.sticky?.has(call.names.path)) {
      return { verdict: "allow", by: "sticky", risk, reason: `${call.names.path} was approved for the rest of this session` };
    }
    for (const rule of policy.stages[stage]) {
      const outcome = evaluate(rule, call);
      if ("broken" in outcome) {
        return {
          verdict: "deny",
          by: "broken",
          ruleId: rule.id,
          risk,
          reason: `approval rule ${rule.id} could not be evaluated (${outcome.broken}), so the call is denied`,
        };
      }
      if (!outcome.applies || !rule.ok) continue;
      const reason = rule.reason ?? `approval rule ${rule.id} (${stage})`;
      if (stage === "deny") return { verdict: "deny", by: "rule", ruleId: rule.id, risk, reason };
      if (stage === "ask") return ask("rule", risk, reason, renderSummary(rule.summary, call.names.path, call.shownArgs ?? call.args), rule.id);
      return allowUnlessToolset(call, risk, { verdict: "allow", by: "rule", ruleId: rule.id, risk, reason });
    }
  }
  const unmatched = policy.unmatched;
  if (unmatched === "allow" || (unmatched === "byRisk" && risk === "low")) {
    const reason = unmatched === "allow" ? "no rule matched and unmatched calls are allowed" : "no rule matched and the tool is low risk (read-only)";
    return allowUnlessToolset(call, risk, { verdict: "allow", by: "unmatched", risk, reason });
  }
  const reason = unmatched === "ask" ? "no rule matched and unmatched calls ask" : `no rule matched and the tool is ${risk} risk`;
  return ask("unmatched", risk, reason, renderSummary(undefined, call.names.path, call.shownArgs ?? call.args));
}

function ask(by: "rule" | "unmatched" | "toolset", risk: Risk, reason: string, summary: string, ruleId?: string): ApprovalDecision {
  return { verdict: "ask", by, ...(ruleId !== undefined ? { ruleId } : {}), risk, reason, summary };
}

function allowUnlessToolset(call: ApprovalCall, risk: Risk, allow: ApprovalDecision): ApprovalDecision {
  if (!call.toolsetRequiresApproval) return allow;
  return ask(
    "toolset",
    risk,
    `the toolset's policy requires approval for ${call.names.path}`,
    renderSummary(undefined, call.names.path, call.shownArgs ?? call.args),
  );
}

function evaluate(rule: CompiledRule, call: ApprovalCall): RuleOutcome {
  if (!rule.ok) {
    // A broken rule can only be ruled out by a glob that was valid and does not match.
    return rule.tool !== undefined && !globMatchesTool(rule.tool, call.names) ? { applies: false } : { broken: rule.problem };
  }
  if (!globMatchesTool(rule.tool, call.names)) return { applies: false };
  try {
    for (const test of rule.tests) {
      const holds = argumentTestHolds(test, call.args);
      if (holds !== true) return holds === false ? { applies: false } : { broken: holds.broken };
    }
    return { applies: true };
  } catch (error) {
    return { broken: `unexpected: ${(error as Error).message}` };
  }
}
