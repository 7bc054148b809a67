import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approvalProblems, decideApproval, globMatches, SUMMARY_CHARS, type Approval, type ArgumentTest } from "../toolset/approval.js";
import { MAX_SUBJECT_LENGTH } from "../util/linear-regex.js";
import { PATCH_APPROVAL, WRITE_APPROVAL } from "./files/write-approval.js";

void describe("approval as data", () => {
  it("never sends; always asks even when auto-approved; unless_auto_approved asks unless auto-approved", () => {
    const call = { tool: "files.write", args: { path: "a" } };
    assert.deepEqual(decideApproval({ kind: "never" }, call), { kind: "send" });
    assert.equal(decideApproval({ kind: "always", reason: "Runs code" }, { ...call, autoApproved: true }).kind, "ask");
    assert.deepEqual(decideApproval({ kind: "unless_auto_approved", reason: "Writes" }, call), {
      kind: "ask",
      reason: "Writes",
      summary: "files.write: Writes",
    });
    assert.deepEqual(decideApproval({ kind: "unless_auto_approved", reason: "Writes" }, { ...call, autoApproved: true }), { kind: "send" });
  });

  it("rules run in stages deny → ask → allow whatever their order, then otherwise", () => {
    const approval: Approval = {
      kind: "rules",
      rules: [
        { action: "allow", when: [{ pointer: "/path", matches: "^docs/" }], reason: "Docs are fine" },
        { action: "ask", when: [{ pointer: "/path", matches: "\\.rs$" }], reason: "Modifying source code", summary: "Write {/path}" },
        { action: "deny", when: [{ pointer: "/path", matches: "^docs/secret" }], reason: "Never the secret docs" },
      ],
      otherwise: { kind: "always", reason: "Everything else is asked" },
    };
    const decide = (path: string) => decideApproval(approval, { tool: "files.write", args: { path } });
    assert.deepEqual(decide("docs/secret.md"), { kind: "deny", reason: "Never the secret docs" });
    assert.deepEqual(decide("docs/main.rs"), { kind: "ask", reason: "Modifying source code", summary: "Write docs/main.rs" }, "ask comes before allow");
    assert.deepEqual(decide("docs/guide.md"), { kind: "send" });
    assert.deepEqual(decide("README"), { kind: "ask", reason: "Everything else is asked", summary: "files.write: Everything else is asked" });
  });

  it("tests: equals and oneOf compare JSON (key order aside), present tests existence, regex only strings; tool is a glob", () => {
    const ask = (test: object, tool?: string): Approval => ({
      kind: "rules",
      rules: [{ action: "ask", reason: "r", ...(tool === undefined ? {} : { tool }), when: [test as never] }],
      otherwise: { kind: "never" },
    });
    const args = { method: "DELETE", body: { b: 2, a: 1 }, n: 3, list: ["x"] };
    const kind = (approval: Approval, tool = "github.delete_repo") => decideApproval(approval, { tool, args }).kind;
    assert.equal(kind(ask({ pointer: "/body", equals: { a: 1, b: 2 } })), "ask");
    assert.equal(kind(ask({ pointer: "/n", equals: "3" })), "send", '3 is not "3"');
    assert.equal(kind(ask({ pointer: "/method", oneOf: ["PUT", "DELETE"] })), "ask");
    assert.equal(kind(ask({ pointer: "/list/0", oneOf: ["y"] })), "send");
    assert.equal(kind(ask({ pointer: "/missing", present: false })), "ask");
    assert.equal(kind(ask({ pointer: "/n", present: false })), "send");
    assert.equal(kind(ask({ pointer: "/n", matches: "3" })), "send", "a number is not a string");
    assert.equal(kind(ask({ pointer: "/method", matches: "^del", flags: "i" })), "ask");
    assert.equal(kind(ask({ pointer: "/method", matches: "." }, "github.*")), "ask");
    assert.equal(kind(ask({ pointer: "/method", matches: "." }, "github.*"), "gitlab.delete_repo"), "send");
    assert.equal(globMatches("*_delete", "x.repo_delete"), true);
    assert.equal(globMatches("a.b", "aXb"), false, "a dot is a dot");
  });

  it("a rule that cannot be evaluated denies and says why", () => {
    const approval: Approval = {
      kind: "rules",
      rules: [{ action: "allow", when: [{ pointer: "/content", matches: "^ok" }], reason: "ok" }],
      otherwise: { kind: "never" },
    };
    const decision = decideApproval(approval, { tool: "files.write", args: { content: "ok" + "x".repeat(MAX_SUBJECT_LENGTH) } });
    assert.equal(decision.kind, "deny");
    assert.match(
      (decision as { reason: string }).reason,
      /cannot be evaluated: the value at \/content is too long to test with a regular expression \(65538 characters\)/,
    );
    const broken = { kind: "rules", rules: [{ action: "ask", when: [{ pointer: "/a", matches: "(" }], reason: "x" }], otherwise: { kind: "never" } } as const;
    assert.match((decideApproval(broken, { tool: "t.t", args: { a: "b" } }) as { reason: string }).reason, /is not a valid regular expression/);
  });

  it("approvalProblems names every malformed part", () => {
    const problems = approvalProblems({
      kind: "rules",
      rules: [
        { action: "ask", when: [{ pointer: "a", equals: 1 }], reason: "" },
        { action: "deny", when: [{ pointer: "/a", matches: "[", flags: "g" }], reason: "r" },
        { action: "allow", when: [{ pointer: "/a", equals: 1, present: true }], reason: "r", summary: "{bad}" },
      ],
      otherwise: { kind: "always", reason: " " },
    });
    assert.deepEqual(problems, [
      "rules[0].reason: say why (the approver or the model reads it)",
      'rules[0].when[0].pointer: the JSON pointer "a" must start with "/" (or be "" for the whole value)',
      'rules[1].when[0].flags: has flags "g": only "i", "m", "s" and "u" are allowed (each at most once; "u" is always on)',
      "rules[2].when[0]: must have exactly one of equals, oneOf, matches, present, not equals and present",
      "otherwise.reason: say why approval is needed (the approver reads it)",
    ]);
    assert.deepEqual(approvalProblems(WRITE_APPROVAL), []);
    assert.deepEqual(approvalProblems(PATCH_APPROVAL), []);
  });

  it("tests are direct tools' tests: `matches` on a linear-time engine (no lookaround or backreferences), unknown fields refused", () => {
    const problems = (test: unknown) =>
      approvalProblems({ kind: "rules", rules: [{ action: "deny", when: [test as ArgumentTest], reason: "r" }], otherwise: { kind: "never" } });
    assert.match(problems({ pointer: "/a", matches: "^(?!safe)" }).join(), /^rules\[0\]\.when\[0\]\.matches: uses lookaround/);
    assert.match(problems({ pointer: "/a", matches: "(a)\\1" }).join(), /^rules\[0\]\.when\[0\]\.matches: uses a backreference/);
    assert.deepEqual(problems({ pointer: "/a", regex: "x" }), [
      "rules[0].when[0].regex: is not a field of a test (fields: pointer, equals, oneOf, matches, present, flags)",
      "rules[0].when[0]: must have exactly one of equals, oneOf, matches, present",
    ]);
    // A pattern that backtracks exponentially in V8 is answered in linear time: this would not return.
    const catastrophic: Approval = {
      kind: "rules",
      rules: [{ action: "deny", when: [{ pointer: "/a", matches: "^(a|a)*$" }], reason: "r" }],
      otherwise: { kind: "never" },
    };
    assert.equal(decideApproval(catastrophic, { tool: "t.t", args: { a: `${"a".repeat(40)}b` } }).kind, "send");
  });

  it("summaries fill {/pointer} from the arguments and are cut at 200 characters", () => {
    const approval: Approval = {
      kind: "rules",
      rules: [{ action: "ask", reason: "r", summary: "Send {/to}: {/body} {/n} {/none}." }],
      otherwise: { kind: "never" },
    };
    const decision = decideApproval(approval, { tool: "mail.send", args: { to: "bob", body: "x".repeat(300), n: 2 } });
    assert.equal(decision.kind === "ask" && decision.summary.length, SUMMARY_CHARS);
    assert.ok(decision.kind === "ask" && decision.summary.startsWith("Send bob: xxx") && decision.summary.endsWith("…"));
  });

  it("files.write asks for git internals, CI workflows, shell scripts and env files, and sends the rest", () => {
    const decide = (path: string) => decideApproval(WRITE_APPROVAL, { tool: "files.write", args: { path, content: "" } });
    for (const path of [".git/hooks/pre-commit", "repo/.git/config", ".github/workflows/ci.yml", "scripts/deploy.sh", ".env", "app/.env.local"]) {
      assert.equal(decide(path).kind, "ask", path);
    }
    assert.deepEqual(decide("scripts/deploy.sh"), { kind: "ask", reason: "Writes a shell script", summary: "Write scripts/deploy.sh" });
    for (const path of ["src/main.ts", "gitignore.md", "docs/.github.md", "environment.md", "shell.txt"]) assert.equal(decide(path).kind, "send", path);
  });

  it("files.patch asks when a file header of the patch names such a path", () => {
    const decide = (patch: string) => decideApproval(PATCH_APPROVAL, { tool: "files.patch", args: { patch } }).kind;
    const header = (old: string, next: string) => `--- ${old}\n+++ ${next}\n@@ -1 +1 @@\n-a\n+b\n`;
    assert.equal(decide(header("a/src/x.ts", "b/src/x.ts")), "send");
    assert.equal(decide(header("a/.git/hooks/pre-push", "b/.git/hooks/pre-push")), "ask");
    assert.equal(decide(header("/dev/null", "b/run.sh\t2026-01-01 00:00:00")), "ask");
    assert.equal(decide(header("a/.env", "b/.env")), "ask");
    assert.equal(decide(header("a/x.ts", "b/x.ts") + header("a/.github/workflows/ci.yml", "b/.github/workflows/ci.yml")), "ask", "a later file counts");
    assert.equal(decide(`--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-see run.sh\n+see .env\n`), "send", "content lines are not headers");
  });
});
