import type { ApprovalRule, ArgumentTest, JsonValue, PlainApproval, ToolApproval } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
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
 * - A rule that cannot be evaluated (a pattern that does not compile, a value too long to test
 *   safely) denies, and says why: a rule the engine cannot read never lets a call through.
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

/**
 * Longest string a `regex` test runs on. A pattern the toolset's author wrote meets a string the
 * model wrote: past this length a backtracking pattern could hold the engine for seconds, so the
 * rule counts as one that cannot be evaluated (and denies), rather than being skipped.
 */
export const REGEX_SUBJECT_CHARS = 64 * 1024;

const FLAGS = /^[imsu]*$/;

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
  const parsed = parsePointer(test.pointer);
  if (!parsed.ok) return { kind: "unevaluable", why: parsed.problem };
  const found = readPointer(args, parsed.tokens);
  if ("present" in test) return found.found === test.present ? YES : NO;
  if (!found.found) return NO;
  const value = found.value;
  if ("equals" in test) return jsonEqual(value, test.equals) ? YES : NO;
  if ("oneOf" in test) return test.oneOf.some((option) => jsonEqual(value, option)) ? YES : NO;
  if (typeof value !== "string") return NO;
  if (value.length > REGEX_SUBJECT_CHARS) {
    return { kind: "unevaluable", why: `${test.pointer} is ${value.length} characters long, more than a pattern is run on (${REGEX_SUBJECT_CHARS})` };
  }
  const pattern = compile(test.regex, test.flags);
  if (typeof pattern === "string") return { kind: "unevaluable", why: pattern };
  return pattern.test(value) ? YES : NO;
}

function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

const compiled = new Map<string, RegExp | string>();

/** The compiled pattern, or why it does not compile. Patterns come from toolsets: few, and kept. */
function compile(regex: string, flags = ""): RegExp | string {
  const key = `${flags}/${regex}`;
  let pattern = compiled.get(key);
  if (pattern === undefined) {
    if (!FLAGS.test(flags)) pattern = `the flags "${flags}" are not among i, m, s, u`;
    else {
      try {
        pattern = new RegExp(regex, flags);
      } catch (error) {
        pattern = `the pattern /${regex}/ does not compile: ${(error as Error).message}`;
      }
    }
    compiled.set(key, pattern);
  }
  return pattern;
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
  const parsed = parsePointer(test.pointer);
  const problems = parsed.ok ? [] : [`${where}.pointer: ${parsed.problem}`];
  const operators = ["equals", "oneOf", "regex", "present"].filter((key) => key in test);
  if (operators.length !== 1) {
    problems.push(`${where}: give exactly one of equals, oneOf, regex, present (found ${operators.length === 0 ? "none" : operators.join(", ")})`);
  } else if ("regex" in test) {
    const pattern = compile(test.regex, test.flags);
    if (typeof pattern === "string") problems.push(`${where}.regex: ${pattern}`);
  } else if ("oneOf" in test && !Array.isArray(test.oneOf)) problems.push(`${where}.oneOf: give an array of values`);
  else if ("present" in test && typeof test.present !== "boolean") problems.push(`${where}.present: give true or false`);
  return problems;
}
