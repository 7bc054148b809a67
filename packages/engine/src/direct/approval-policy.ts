import type { ApprovalPolicy, ApprovalRule, ArgumentTest } from "@tapedeck/protocol/api";
import { checkArgumentTest, describeValue, isPlainObject, MAX_ONE_OF_VALUES, type CompiledTest } from "../toolset/argument-test.js";
import { parseTemplate, type TemplatePieces } from "./summary-template.js";
import { globProblem } from "./tool-glob.js";
import { Risk, type RiskOverride } from "./tool-risk.js";

/**
 * Approval policies of direct tools, as data: JSON that crosses HTTP, is pinned in the session's
 * binding and is evaluated where the call is journaled (`approval-decision.ts`). This file holds
 * the shapes, the checker that names the path of every mistake, and the compiled form.
 *
 * Invariants:
 * - `checkApprovalPolicy` never throws, whatever it is given. Each rule is checked on its own: a
 *   rule with a mistake is kept as `broken` in the compiled form (it denies the calls it is
 *   reached for: "a rule that cannot be evaluated denies"), and its errors are reported; a policy
 *   whose shape is wrong as a whole compiles to one broken rule.
 * - `normalized` is the canonical spelling of the policy (defaults filled, shorthand expanded):
 *   what a binding records, so that two spellings of one policy have one binding.
 * - Unknown keys are mistakes (a misspelt `"alow"` must not silently allow nothing).
 */

// The shapes themselves are wire types (`@tapedeck/protocol/api`): the SDK, the HTTP API and
// the binding speak them; this file checks and compiles them. The tests on arguments are a
// toolset's too: one shape, one checker, one evaluator (`toolset/argument-test.ts`).
export type { ApprovalPolicy, ApprovalRule, ArgumentTest } from "@tapedeck/protocol/api";
export type { CompiledTest } from "../toolset/argument-test.js";

/** A rule, or a tool glob alone (`"tool_list"` means `{ tool: "tool_list" }`). */
export type RuleSpec = ApprovalRule | string;

/** What happens to a call no rule matched. */
export const Unmatched = {
  /** Low risk is allowed, medium and high risk ask (the default). */
  byRisk: "byRisk",
  /** Every unmatched call asks. */
  ask: "ask",
  /** Every unmatched call is allowed. */
  allow: "allow",
} as const;
export type Unmatched = (typeof Unmatched)[keyof typeof Unmatched];

export const STAGES = ["deny", "ask", "allow"] as const;
export type Stage = (typeof STAGES)[number];

/** A mistake in a policy: where (`approval.ask[0].args[1].matches`) and what. */
export interface PolicyError {
  readonly path: string;
  readonly message: string;
}

export type CompiledRule =
  | {
      readonly ok: true;
      readonly id: string;
      readonly tool: string;
      readonly tests: readonly CompiledTest[];
      readonly summary?: TemplatePieces;
      readonly reason?: string;
    }
  /** A rule with a mistake: it denies every call it is reached for whose tool its glob may match (`tool` absent: any). */
  | { readonly ok: false; readonly id: string; readonly tool?: string; readonly problem: string };

export interface CompiledPolicy {
  readonly stages: { readonly [S in Stage]: readonly CompiledRule[] };
  readonly unmatched: Unmatched;
  readonly risk: readonly RiskOverride[];
}

export interface CheckedPolicy {
  /** Empty when the policy is valid. */
  readonly errors: readonly PolicyError[];
  readonly compiled: CompiledPolicy;
  /** The policy with defaults filled and shorthand expanded; only meaningful when `errors` is empty. */
  readonly normalized: ApprovalPolicy;
}

/** Rules per stage, tests per rule and values of a `oneOf`: far above any hand-written policy, and a bound on the work per call. */
export const POLICY_LIMITS = {
  rulesPerStage: 1000,
  testsPerRule: 32,
  oneOfValues: MAX_ONE_OF_VALUES,
  idLength: 128,
  reasonLength: 1000,
  riskOverrides: 1000,
} as const;

const POLICY_KEYS = new Set(["deny", "ask", "allow", "unmatched", "risk"]);
const RULE_KEYS = new Set(["id", "tool", "args", "summary", "reason"]);

/** Checks `value` as an approval policy (`path` names it in errors). Never throws. */
export function checkApprovalPolicy(value: unknown, path = "approval"): CheckedPolicy {
  const errors: PolicyError[] = [];
  const fail = (where: string, message: string) => errors.push({ path: where, message });
  const stages: { [S in Stage]: CompiledRule[] } = { deny: [], ask: [], allow: [] };
  const normalized: { -readonly [K in keyof ApprovalPolicy]: ApprovalPolicy[K] } = {};
  let unmatched: Unmatched = "byRisk";
  const risk: RiskOverride[] = [];

  if (value === undefined) return { errors, compiled: { stages, unmatched, risk }, normalized: { deny: [], ask: [], allow: [], unmatched, risk } };
  if (!isPlainObject(value)) {
    fail(path, `must be an object like { deny: [...], ask: [...], allow: [...], unmatched: "byRisk" }, not ${describeValue(value)}`);
    stages.deny.push({ ok: false, id: path, problem: errors[0]!.message });
    return { errors, compiled: { stages, unmatched, risk }, normalized };
  }
  for (const key of Object.keys(value)) if (!POLICY_KEYS.has(key)) fail(`${path}.${key}`, `is not a policy field (fields: ${[...POLICY_KEYS].join(", ")})`);
  if (errors.length > 0) stages.deny.push({ ok: false, id: path, problem: errors[0]!.message });

  for (const stage of STAGES) {
    const rules = value[stage];
    const where = `${path}.${stage}`;
    if (rules === undefined) {
      normalized[stage] = [];
      continue;
    }
    if (!Array.isArray(rules) || rules.length > POLICY_LIMITS.rulesPerStage) {
      const message = Array.isArray(rules) ? `has more than ${POLICY_LIMITS.rulesPerStage} rules` : `must be an array of rules, not ${describeValue(rules)}`;
      fail(where, message);
      stages[stage].push({ ok: false, id: where, problem: message });
      continue;
    }
    const normalizedRules: ApprovalRule[] = [];
    rules.forEach((rule: unknown, index) => {
      const checked = checkRule(rule, `${where}[${index}]`, `${stage}[${index}]`, fail);
      stages[stage].push(checked.compiled);
      normalizedRules.push(checked.normalized);
    });
    normalized[stage] = normalizedRules;
  }

  if (value.unmatched !== undefined) {
    if (typeof value.unmatched === "string" && Object.hasOwn(Unmatched, value.unmatched)) unmatched = value.unmatched as Unmatched;
    else {
      const message = `must be "byRisk", "ask" or "allow", not ${describeValue(value.unmatched)}`;
      fail(`${path}.unmatched`, message);
      // Unknown: the strictest reading that still yields a decision a human can make.
      unmatched = "ask";
    }
  }
  normalized.unmatched = unmatched;

  if (value.risk !== undefined) {
    if (!Array.isArray(value.risk) || value.risk.length > POLICY_LIMITS.riskOverrides) {
      fail(`${path}.risk`, `must be an array of { tool, risk } (at most ${POLICY_LIMITS.riskOverrides}), not ${describeValue(value.risk)}`);
    } else {
      value.risk.forEach((override: unknown, index) => {
        const where = `${path}.risk[${index}]`;
        if (!isPlainObject(override)) return fail(where, `must be { tool: "<glob>", risk: "low" | "medium" | "high" }, not ${describeValue(override)}`);
        for (const key of Object.keys(override))
          if (key !== "tool" && key !== "risk") fail(`${where}.${key}`, "is not a field of a risk override (fields: tool, risk)");
        const problem = globProblem(override.tool);
        if (problem !== undefined) fail(`${where}.tool`, problem);
        if (typeof override.risk !== "string" || !Object.hasOwn(Risk, override.risk))
          fail(`${where}.risk`, `must be "low", "medium" or "high", not ${describeValue(override.risk)}`);
        // A broken override is dropped: risk only decides between allow and ask, and the errors reject the policy at creation.
        else if (problem === undefined) risk.push({ tool: override.tool as string, risk: override.risk as Risk });
      });
    }
  }
  normalized.risk = risk;
  return { errors, compiled: { stages, unmatched, risk }, normalized };
}

/** The errors of `value` as an approval policy; empty when it is valid. */
export function validateApprovalPolicy(value: unknown, path = "approval"): readonly PolicyError[] {
  return checkApprovalPolicy(value, path).errors;
}

function checkRule(
  rule: unknown,
  where: string,
  defaultId: string,
  fail: (path: string, message: string) => void,
): { compiled: CompiledRule; normalized: ApprovalRule } {
  const problems: string[] = [];
  const report = (path: string, message: string) => {
    problems.push(`${path}: ${message}`);
    fail(path, message);
  };
  const spec: unknown = typeof rule === "string" ? { tool: rule } : rule;
  if (!isPlainObject(spec)) {
    report(where, `must be a tool glob ("tool_list") or a rule { id?, tool?, args?, summary?, reason? }, not ${describeValue(rule)}`);
    return { compiled: { ok: false, id: defaultId, problem: problems[0]! }, normalized: {} };
  }
  for (const key of Object.keys(spec)) if (!RULE_KEYS.has(key)) report(`${where}.${key}`, `is not a rule field (fields: ${[...RULE_KEYS].join(", ")})`);

  let id = defaultId;
  if (spec.id !== undefined) {
    if (typeof spec.id !== "string" || spec.id === "" || spec.id.length > POLICY_LIMITS.idLength) {
      report(`${where}.id`, `must be a non-empty string of at most ${POLICY_LIMITS.idLength} characters`);
    } else id = spec.id;
  }
  let tool = "*";
  let toolOk = true;
  if (spec.tool !== undefined) {
    const problem = globProblem(spec.tool);
    if (problem !== undefined) {
      report(`${where}.tool`, problem);
      toolOk = false;
    } else tool = spec.tool as string;
  }
  const tests: CompiledTest[] = [];
  if (spec.args !== undefined) {
    if (!Array.isArray(spec.args) || spec.args.length > POLICY_LIMITS.testsPerRule) {
      report(`${where}.args`, `must be an array of at most ${POLICY_LIMITS.testsPerRule} tests like { pointer: "/tool_name", matches: "_delete$" }`);
    } else {
      spec.args.forEach((test: unknown, index) => {
        const compiled = checkArgumentTest(test, `${where}.args[${index}]`, report);
        if (compiled !== undefined) tests.push(compiled);
      });
    }
  }
  let summary: TemplatePieces | undefined;
  if (spec.summary !== undefined) {
    const parsed = typeof spec.summary === "string" ? parseTemplate(spec.summary) : { ok: false as const, problem: "must be a string" };
    if (parsed.ok) summary = parsed.pieces;
    else report(`${where}.summary`, parsed.problem);
  }
  if (spec.reason !== undefined && (typeof spec.reason !== "string" || spec.reason.length > POLICY_LIMITS.reasonLength)) {
    report(`${where}.reason`, `must be a string of at most ${POLICY_LIMITS.reasonLength} characters`);
  }
  const reason = typeof spec.reason === "string" ? spec.reason : undefined;
  const normalized: ApprovalRule = {
    id,
    tool,
    args: Array.isArray(spec.args) ? (spec.args as ArgumentTest[]) : [],
    ...(typeof spec.summary === "string" ? { summary: spec.summary } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
  if (problems.length > 0) {
    return { compiled: { ok: false, id, ...(toolOk ? { tool } : {}), problem: problems.join("; ") }, normalized };
  }
  return {
    compiled: { ok: true, id, tool, tests, ...(summary !== undefined ? { summary } : {}), ...(reason !== undefined ? { reason } : {}) },
    normalized,
  };
}
