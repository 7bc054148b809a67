import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { JsonObject, JsonValue } from "@tapedeck/protocol";
import { checkApprovalPolicy, validateApprovalPolicy, type ApprovalPolicy } from "./approval-policy.js";
import { decideApproval, type ApprovalCall, type ApprovalDecision } from "./approval-decision.js";
import { gatewayRules } from "@tapedeck/protocol";
import { MAX_SUBJECT_LENGTH } from "../util/linear-regex.js";
import { MAX_SUMMARY_LENGTH } from "./summary-template.js";

/** A call of `group.name` as the decision sees it. */
function call(
  path: string,
  args: JsonValue = {},
  extra: { annotations?: JsonObject; risk?: "low" | "medium" | "high"; toolsetRequiresApproval?: boolean } = {},
): ApprovalCall {
  const [group, name] = [path.slice(0, path.indexOf(".")), path.slice(path.indexOf(".") + 1)];
  return {
    names: { path, name, modelName: `${group}_${name}` },
    args,
    tool: { ...(extra.annotations ? { annotations: extra.annotations } : {}), ...(extra.risk ? { risk: extra.risk } : {}) },
    ...(extra.toolsetRequiresApproval ? { toolsetRequiresApproval: true } : {}),
  };
}

/** Decides `c` under `policy` (which must be valid). */
function decide(policy: unknown, c: ApprovalCall, sticky?: string[]): ApprovalDecision {
  const checked = checkApprovalPolicy(policy);
  assert.deepEqual(checked.errors, [], "the policy of this test is valid");
  return decideApproval(checked.compiled, c, sticky ? { sticky: new Set(sticky) } : {});
}

const READ_ONLY = { readOnlyHint: true };

describe("approval policies as data", () => {
  it("decide in stages deny → ask → allow, the first matching rule of a stage winning, then unmatched", () => {
    const policy: ApprovalPolicy = {
      deny: [{ id: "no-deletes", tool: "*_delete", reason: "deleting is done by hand" }],
      ask: [{ id: "big-refunds", tool: "stripe.create_refund", args: [{ pointer: "/amount", oneOf: [1000, 5000] }] }],
      allow: ["stripe.*", { id: "all-reads", tool: "*.get_*" }],
    };
    const denied = decide(policy, call("stripe.customer_delete"));
    assert.deepEqual([denied.verdict, denied.by, denied.ruleId, denied.reason], ["deny", "rule", "no-deletes", "deleting is done by hand"]);
    const asked = decide(policy, call("stripe.create_refund", { amount: 5000 }));
    assert.deepEqual([asked.verdict, asked.ruleId], ["ask", "big-refunds"]);
    const allowed = decide(policy, call("stripe.create_refund", { amount: 10 }));
    assert.deepEqual([allowed.verdict, allowed.by, allowed.ruleId], ["allow", "rule", "allow[0]"], "a bare glob is a rule; its id is its stage and index");
    assert.equal(decide(policy, call("github.get_issue")).ruleId, "all-reads");
    const unmatched = decide(policy, call("github.create_issue"));
    assert.deepEqual([unmatched.verdict, unmatched.by, unmatched.risk], ["ask", "unmatched", "medium"]);
  });

  it("unmatched byRisk (the default) allows low risk and asks for medium and high; ask and allow do what they say", () => {
    assert.equal(decide({}, call("fs.read_file", {}, { annotations: READ_ONLY })).verdict, "allow");
    assert.equal(decide({}, call("fs.write_file")).verdict, "ask");
    const destructive = decide({}, call("fs.delete_file", {}, { annotations: { destructiveHint: true } }));
    assert.deepEqual([destructive.verdict, destructive.risk], ["ask", "high"]);
    assert.equal(decide({ unmatched: "ask" }, call("fs.read_file", {}, { annotations: READ_ONLY })).verdict, "ask");
    assert.equal(decide({ unmatched: "allow" }, call("fs.delete_file", {}, { annotations: { destructiveHint: true } })).verdict, "allow");
  });

  it("take risk from the override first, then the pinned risk, then the annotations — and never let risk skip a rule", () => {
    const policy: ApprovalPolicy = {
      deny: [{ tool: "fs.read_secret" }],
      risk: [
        { tool: "fs.write_tmp", risk: "low" },
        { tool: "fs.*", risk: "high" },
      ],
    };
    assert.deepEqual(decide(policy, call("fs.write_tmp")).verdict, "allow", "overridden to low");
    assert.equal(decide(policy, call("fs.read_file", {}, { annotations: READ_ONLY })).risk, "high", "the override wins over annotations");
    assert.equal(decide({}, call("x.y", {}, { risk: "low", annotations: { destructiveHint: true } })).verdict, "allow", "pinned risk over annotations");
    assert.equal(decide({}, call("x.y", {}, { annotations: { readOnlyHint: true, destructiveHint: true } })).risk, "low");
    assert.equal(decide(policy, call("fs.read_secret", {}, { annotations: READ_ONLY })).verdict, "deny", "a read-only hint does not skip a deny rule");
  });

  it("test arguments by JSON Pointer: equals, oneOf, matches, present (all tests of a rule must hold)", () => {
    const policy: ApprovalPolicy = {
      deny: [
        {
          id: "prod",
          tool: "db.query",
          args: [
            { pointer: "/target/env", equals: "prod" },
            { pointer: "/sql", matches: "\\bdrop\\b", flags: "i" },
          ],
        },
        { id: "force", tool: "git.push", args: [{ pointer: "/options/force", present: true }] },
        { id: "slash", tool: "kv.put", args: [{ pointer: "/a~1b/~0x", equals: { deep: [1, 2] } }] },
      ],
      unmatched: "allow",
    };
    assert.equal(decide(policy, call("db.query", { target: { env: "prod" }, sql: "DROP TABLE t" })).ruleId, "prod");
    assert.equal(decide(policy, call("db.query", { target: { env: "dev" }, sql: "DROP TABLE t" })).verdict, "allow");
    assert.equal(decide(policy, call("db.query", { target: { env: "prod" }, sql: "select" })).verdict, "allow");
    assert.equal(decide(policy, call("db.query", { target: { env: "prod" }, sql: 42 })).verdict, "allow", "a regex does not match a number");
    assert.equal(decide(policy, call("git.push", { options: { force: false } })).ruleId, "force", "present means the key is there, whatever its value");
    assert.equal(decide(policy, call("git.push", { options: {} })).verdict, "allow");
    assert.equal(decide(policy, call("kv.put", { "a/b": { "~x": { deep: [1, 2] } } })).ruleId, "slash", "~1 and ~0 escapes; equality is JSON equality");
    assert.equal(decide(policy, call("kv.put", { "a/b": { "~x": { deep: [2, 1] } } })).verdict, "allow");
    assert.equal(decide(policy, call("git.push", { options: { toString: 1 } })).verdict, "allow", "only own keys are read");
    assert.equal(decide({ deny: [{ args: [{ pointer: "/constructor", present: true }] }], unmatched: "allow" }, call("a.b", {})).verdict, "allow");
  });

  it("match a tool glob against its path, its name and its model name", () => {
    const policy: ApprovalPolicy = { deny: [{ tool: "tool_execute" }, { tool: "gh_*" }, { tool: "github.merge_*" }], unmatched: "allow" };
    assert.equal(decide(policy, call("tiktok.tool_execute")).ruleId, "deny[0]");
    assert.equal(decide(policy, call("gh.close_issue")).ruleId, "deny[1]", "model name gh_close_issue");
    assert.equal(decide(policy, call("github.merge_pull_request")).ruleId, "deny[2]");
    assert.equal(decide(policy, call("github.list_issues")).verdict, "allow");
  });

  it("ask with the approver's summary: the template filled from the arguments, on one line, cut at 200 characters", () => {
    const policy: ApprovalPolicy = { ask: [{ tool: "*", summary: "TikTok {/tool_name} on {tool}: {/params} {{literal}} {/missing}" }] };
    const asked = decide(policy, call("tiktok.tool_execute", { tool_name: "campaign_delete", params: { id: 7 } }));
    assert.equal(asked.verdict === "ask" && asked.summary, 'TikTok campaign_delete on tiktok.tool_execute: {"id":7} {literal} (no /missing)');
    const long = decide(policy, call("t.x", { tool_name: `a\nb\u2028${"😀".repeat(300)}` }));
    assert.ok(long.verdict === "ask");
    assert.ok(long.summary.length <= MAX_SUMMARY_LENGTH, `${long.summary.length}`);
    assert.ok(long.summary.startsWith("TikTok a b 😀"), "line breaks become spaces");
    assert.ok(long.summary.endsWith("…"));
    assert.doesNotMatch(long.summary, /[\uD800-\uDBFF]…$/, "never cut inside a surrogate pair");
    const byDefault = decide({}, call("github.create_issue", { title: "x" }));
    assert.equal(byDefault.verdict === "ask" && byDefault.summary, 'github.create_issue {"title":"x"}');
  });

  it("never allow a tool whose toolset policy requires approval without asking; deny rules and sticky approvals still come first", () => {
    const policy: ApprovalPolicy = { deny: [{ tool: "*.drop" }], allow: ["*"] };
    const asked = decide(policy, call("db.insert", {}, { toolsetRequiresApproval: true }));
    assert.deepEqual([asked.verdict, asked.by], ["ask", "toolset"]);
    assert.equal(decide({ unmatched: "allow" }, call("db.insert", {}, { toolsetRequiresApproval: true })).verdict, "ask");
    assert.equal(decide(policy, call("db.drop", {}, { toolsetRequiresApproval: true })).verdict, "deny");
    assert.equal(decide(policy, call("db.insert", {}, { toolsetRequiresApproval: true }), ["db.insert"]).by, "sticky");
  });

  it("let a sticky 'always for this session' approval skip ask rules, but not deny rules", () => {
    const policy: ApprovalPolicy = { deny: [{ tool: "db.query", args: [{ pointer: "/sql", matches: "drop", flags: "i" }] }], ask: ["db.*"] };
    assert.equal(decide(policy, call("db.query", { sql: "select" }), ["db.query"]).verdict, "allow");
    assert.equal(decide(policy, call("db.query", { sql: "DROP" }), ["db.query"]).verdict, "deny");
    assert.equal(decide(policy, call("db.insert", {}), ["db.query"]).verdict, "ask", "sticky is per tool");
  });

  it("deny when a rule cannot be evaluated, naming the rule — including a rule reached after a broken one was skipped by its glob", () => {
    const broken = checkApprovalPolicy({ allow: [{ id: "bad", tool: "db.*", args: [{ pointer: "/sql", matches: "(a)\\1" }] }], unmatched: "allow" });
    assert.equal(broken.errors.length, 1);
    const denied = decideApproval(broken.compiled, call("db.query", { sql: "x" }));
    assert.deepEqual([denied.verdict, denied.by, denied.ruleId], ["deny", "broken", "bad"]);
    assert.match(denied.reason, /could not be evaluated .*backreference/);
    assert.equal(decideApproval(broken.compiled, call("fs.read", {})).verdict, "allow", "its valid glob does not match fs.read");
    const tooLong = decide(
      { allow: [{ id: "ops", tool: "*", args: [{ pointer: "/op", matches: "_get$" }] }] },
      call("g.x", { op: "a".repeat(MAX_SUBJECT_LENGTH + 1) }),
    );
    assert.deepEqual([tooLong.verdict, tooLong.ruleId], ["deny", "ops"]);
    assert.match(tooLong.reason, /the value at \/op is too long/);
    const notAnObject = checkApprovalPolicy(["allow"]);
    assert.equal(
      decideApproval(notAnObject.compiled, call("a.b", {}, { annotations: READ_ONLY })).verdict,
      "deny",
      "a policy that is not one denies everything",
    );
    const badGlob = checkApprovalPolicy({ ask: [{ tool: 7 }], unmatched: "allow" });
    assert.equal(decideApproval(badGlob.compiled, call("a.b")).verdict, "deny", "a rule without a valid glob may apply to any tool");
  });

  it("validate policies with errors that name the path and say what to write", () => {
    const errors = validateApprovalPolicy({
      alow: ["x"],
      deny: [{ tool: "" }, 5, { id: "x", tool: "a", args: [{ pointer: "tool_name", equals: 1 }] }],
      ask: [
        {
          args: [
            { pointer: "/a", equals: 1, oneOf: [1] },
            { pointer: "/b", matches: "(?=x)" },
            { pointer: "/c", matches: "a", flags: "g" },
          ],
        },
      ],
      allow: [{ summary: "{/a", reason: 3, extra: true }, { args: [{ pointer: "/~2", present: "yes" }] }],
      unmatched: "sometimes",
      risk: [{ tool: "x", risk: "none" }],
    });
    const byPath = new Map(errors.map((e) => [e.path, e.message]));
    assert.match(byPath.get("approval.alow")!, /not a policy field/);
    assert.match(byPath.get("approval.deny[0].tool")!, /must not be empty/);
    assert.match(byPath.get("approval.deny[1]")!, /tool glob .* or a rule/);
    assert.match(byPath.get("approval.deny[2].args[0].pointer")!, /must start with "\/"/);
    assert.match(byPath.get("approval.ask[0].args[0]")!, /exactly one of .* not equals and oneOf/);
    assert.match(byPath.get("approval.ask[0].args[1].matches")!, /lookaround/);
    assert.match(byPath.get("approval.ask[0].args[2].flags")!, /only "i", "m", "s" and "u"/);
    assert.match(byPath.get("approval.allow[0].summary")!, /never closed/);
    assert.match(byPath.get("approval.allow[0].reason")!, /must be a string/);
    assert.match(byPath.get("approval.allow[0].extra")!, /not a rule field/);
    assert.match(byPath.get("approval.allow[1].args[0].pointer")!, /"~" not followed by 0 or 1/);
    assert.match(byPath.get("approval.unmatched")!, /"byRisk", "ask" or "allow"/);
    assert.match(byPath.get("approval.risk[0].risk")!, /"low", "medium" or "high"/);
    assert.equal(errors.length, 13);
    assert.deepEqual(validateApprovalPolicy(undefined), []);
    assert.match(validateApprovalPolicy("ask", "directTools.approval")[0]!.path, /^directTools\.approval$/);
  });

  it("normalize a policy to one spelling: defaults filled, bare globs expanded", () => {
    const a = checkApprovalPolicy({ allow: ["tool_list"] }).normalized;
    const b = checkApprovalPolicy({ deny: [], ask: [], allow: [{ id: "allow[0]", tool: "tool_list", args: [] }], unmatched: "byRisk", risk: [] }).normalized;
    assert.deepEqual(a, b);
    assert.deepEqual(checkApprovalPolicy(undefined).normalized, { deny: [], ask: [], allow: [], unmatched: "byRisk", risk: [] });
  });

  it("never throw, whatever the policy (property)", () => {
    fc.assert(
      fc.property(fc.anything(), fc.jsonValue(), (policy, args) => {
        const checked = checkApprovalPolicy(policy);
        const decision = decideApproval(checked.compiled, call("a.b", args as JsonValue));
        assert.ok(["allow", "ask", "deny"].includes(decision.verdict));
        if (checked.errors.length > 0 && decision.verdict === "allow") {
          // An invalid policy may still allow a call, but only through rules that are valid (or unmatched), never through a broken one.
          assert.notEqual(decision.by, "broken");
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("gateway rules (seed 002's recipe)", () => {
  const gateway = gatewayRules({
    tool: "tool_execute",
    operation: "/tool_name",
    writes: "_(create|update|delete|upload)$",
    reads: /_(get|list|search)$/,
    summary: "TikTok {/tool_name}",
  });
  const execute = (operation: string) => call("tiktok.tool_execute", { tool_name: operation, params: {} });

  it("a rule on tool names alone lets a delete through the dispatcher (the negative case)", () => {
    const nameOnly: ApprovalPolicy = { deny: [{ tool: "*_delete" }], allow: ["*"] };
    assert.equal(decide(nameOnly, execute("campaign_delete")).verdict, "allow", "every operation is called tool_execute");
  });

  it("the argument rules ask for writes with the real operation in the summary, allow reads, and leave the rest to unmatched", () => {
    const policy: ApprovalPolicy = { ...gateway, allow: [...gateway.allow, "tool_list", "tool_get"] };
    for (const operation of ["campaign_delete", "ad_create", "budget_update", "creative_upload"]) {
      const decision = decide(policy, execute(operation));
      assert.deepEqual([decision.verdict, decision.ruleId], ["ask", "gateway.writes"], operation);
      assert.equal(decision.verdict === "ask" && decision.summary, `TikTok ${operation}`);
    }
    for (const operation of ["campaign_get", "ad_list", "audience_search"]) {
      const decision = decide(policy, execute(operation));
      assert.deepEqual([decision.verdict, decision.ruleId], ["allow", "gateway.reads"], operation);
    }
    assert.equal(decide(policy, execute("campaign_pause")).verdict, "ask", "neither read nor write: the unannotated dispatcher asks");
    assert.equal(decide(policy, call("tiktok.tool_execute", { params: {} })).verdict, "ask", "no operation named: asks");
    assert.equal(decide(policy, call("tiktok.tool_list")).verdict, "allow");
    assert.deepEqual(validateApprovalPolicy(JSON.parse(JSON.stringify(policy))), [], "the rules survive JSON (HTTP)");
  });

  it("refuse a RegExp the engine cannot run, at validation", () => {
    const errors = validateApprovalPolicy(gatewayRules({ tool: "t", operation: "/op", writes: /x/g, reads: "(?=y)" }));
    assert.deepEqual(
      errors.map((e) => e.path),
      ["approval.ask[0].args[0].flags", "approval.allow[0].args[0].matches"],
    );
  });
});
