import type { ApprovalRule, ArgumentTest, JsonValue, PlainApproval, ToolApproval } from "@tapedeck/protocol";
import { argumentTestHolds, checkArgumentTest, type CompiledTest } from "./argument-test.js";
import { parsePointer, readPointer } from "./json-pointer.js";

/**
 * Approval as data (issue 15's "one tool contract", in [direct-tools]' rule shape): whether a
 * call is sent, asked for, or refused, decided from the tool's name and its arguments. Being
 * data, it can be written in a toolset file or an API body, pinned and hashed with a toolset,
 * and evaluated wherever the call is journaled — in any process.
 *
 * Invariants:
 * - Rules are evaluated in stages: every `deny` rule first, then `ask`, then `allow`; the first
 *   rule of a stage that matches decides. Nothing matched: `otherwise` decides.
 * - A rule that cannot be evaluated (a test with a mistake, a value too long for its regular
 *   expression) denies, and says why: a rule the engine cannot read never lets a call through.
 * - Tests on the arguments are direct tools' too (`argument-test.ts`): one checker, one
 *   evaluator, regular expressions on a linear-time engine.
 * - `always` is asked every time; `unless_auto_approved` and a rule's `ask` are skipped when the
 *   harness has auto-approved the tool (a sticky "always allow").
 * - `approvalProblems` finds every malformed part at definition time, so a decision never meets one.
 */

export type { ApprovalRule, ArgumentTest, PlainApproval } from "@tapedeck/protocol";
/** The approval of a tool (the wire type `ToolApproval`). */
export type Approval = ToolApproval;

export const NEVER: PlainApproval = { kind: "never" };

export type ApprovalDecision =
  /** No approval is needed: the call is sent. */
  | { readonly kind: "send" }
  /** Someone must approve the call before it is sent. */
  | { readonly kind: "ask"; readonly reason: string; readonly summary: string }
  /** The call is refused, without asking anyone. */
  | { readonly kind: "deny"; readonly reason: string };

export interface ApprovalCall {
  /** `group.name` of the tool called. */
  readonly tool: string;
  readonly args: JsonValue;
  /** The harness auto-approved this tool (a sticky "always allow"). Default false. */
  readonly autoApproved?: boolean;
}

/** Longest summary shown to an approver ([direct-tools]). */
export const SUMMARY_CHARS = 200;

/** What is wrong with `approval` (empty when nothing is), each naming the part: "rules[2].when[0].pointer: …". */
export function approvalProblems(approval: Approval): readonly string[] {
  if (approval.kind !== "rules") return plainProblems(approval, "");
  return [...approval.rules.flatMap((rule, index) => ruleProblems(rule, `rules[${index}]`)), ...plainProblems(approval.otherwise, "otherwise.")];
}

/** Decides what happens to one call. Never throws: what cannot be evaluated denies. */
export function decideApproval(approval: Approval, call: ApprovalCall): ApprovalDecision {
  if (approval.kind !== "rules") return decidePlain(approval, call);
  for (const action of ["deny", "ask", "allow"] as const) {
    for (const rule of approval.rules) {
      if (rule.action !== action) continue;
      const match = ruleMatches(rule, call);
      if (match.kind === "unevaluable") return { kind: "deny", reason: `${call.tool}: an approval rule (${rule.reason}) cannot be evaluated: ${match.why}` };
      if (match.kind === "no") continue;
      if (action === "deny") return { kind: "deny", reason: rule.reason };
      if (action === "allow") return { kind: "send" };
      return call.autoApproved === true ? { kind: "send" } : { kind: "ask", reason: rule.reason, summary: summarize(rule.summary, call, rule.reason) };
    }
  }
  return decidePlain(approval.otherwise, call);
}

function decidePlain(approval: PlainApproval, call: ApprovalCall): ApprovalDecision {
  switch (approval.kind) {
    case "never":
      return { kind: "send" };
    case "unless_auto_approved":
      return call.autoApproved === true ? { kind: "send" } : { kind: "ask", reason: approval.reason, summary: summarize(undefined, call, approval.reason) };
    case "always":
      return { kind: "ask", reason: approval.reason, summary: summarize(undefined, call, approval.reason) };
  }
}

type Match = { readonly kind: "yes" } | { readonly kind: "no" } | { readonly kind: "unevaluable"; readonly why: string };

const YES: Match = { kind: "yes" };
const NO: Match = { kind: "no" };

function ruleMatches(rule: ApprovalRule, call: ApprovalCall): Match {
  if (rule.tool !== undefined && !globMatches(rule.tool, call.tool)) return NO;
  for (const test of rule.when ?? []) {
    const match = testMatches(test, call.args);
    if (match.kind !== "yes") return match;
  }
  return YES;
}

function testMatches(test: ArgumentTest, args: JsonValue): Match {
  const compiled = compiledTest(test);
  if (typeof compiled === "string") return { kind: "unevaluable", why: compiled };
  const holds = argumentTestHolds(compiled, args);
  return holds === true ? YES : holds === false ? NO : { kind: "unevaluable", why: holds.broken };
}

/** Compiled tests (or their mistakes), kept per test object: an approval is data pinned with its toolset, decided many times. */
const compiledTests = new WeakMap<ArgumentTest, CompiledTest | string>();

function compiledTest(test: ArgumentTest): CompiledTest | string {
  // Not an object (an approval that skipped `approvalProblems`): a WeakMap cannot key it, and it is a mistake anyway.
  const cacheable = typeof test === "object" && test !== null;
  let compiled = cacheable ? compiledTests.get(test) : undefined;
  if (compiled === undefined) {
    const problems: string[] = [];
    compiled = checkArgumentTest(test, "test", (path, message) => problems.push(`${path}: ${message}`)) ?? problems.join("; ");
    if (cacheable) compiledTests.set(test, compiled);
  }
  return compiled;
}

/** Whether `glob` (`*`: any run of characters, everything else literal) matches the whole of `name`. */
export function globMatches(glob: string, name: string): boolean {
  const source = glob
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`, "s").test(name);
}

const PLACEHOLDER = /\{(\/[^}]*|)\}/g;

function summarize(template: string | undefined, call: ApprovalCall, reason: string): string {
  const text =
    template === undefined
      ? `${call.tool}: ${reason}`
      : template.replace(PLACEHOLDER, (_whole, pointer: string) => {
          const parsed = parsePointer(pointer);
          const found = parsed.ok ? readPointer(call.args, parsed.tokens) : undefined;
          return found?.found !== true ? "" : typeof found.value === "string" ? found.value : JSON.stringify(found.value);
        });
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

function plainProblems(approval: PlainApproval, where: string): string[] {
  if (approval.kind === "never") return [];
  if (approval.kind !== "unless_auto_approved" && approval.kind !== "always") {
    return [`${where}kind: "${(approval as { kind: unknown }).kind as string}" is not one of never, unless_auto_approved, always, rules`];
  }
  return approval.reason.trim() === "" ? [`${where}reason: say why approval is needed (the approver reads it)`] : [];
}

function ruleProblems(rule: ApprovalRule, where: string): string[] {
  const problems: string[] = [];
  if (!["deny", "ask", "allow"].includes(rule.action)) problems.push(`${where}.action: "${rule.action}" is not one of deny, ask, allow`);
  if (rule.reason.trim() === "") problems.push(`${where}.reason: say why (the approver or the model reads it)`);
  (rule.when ?? []).forEach((test, index) => problems.push(...testProblems(test, `${where}.when[${index}]`)));
  if (rule.summary !== undefined) {
    for (const [, pointer] of rule.summary.matchAll(PLACEHOLDER)) {
      const parsed = parsePointer(pointer ?? "");
      if (!parsed.ok) problems.push(`${where}.summary: ${parsed.problem}`);
    }
  }
  return problems;
}

function testProblems(test: ArgumentTest, where: string): string[] {
  const problems: string[] = [];
  checkArgumentTest(test, where, (path, message) => problems.push(`${path}: ${message}`));
  return problems;
}
