import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { PinnedTool } from "@tapedeck/protocol";
import { DEFAULT_POLICY } from "../toolset/policy.js";
import { toolsetOf } from "../toolset/pin.js";
import { checkPendingApproval, signPendingApproval, type PendingApproval } from "./approval-signature.js";
import { bindingNote, diffBindings, noteForBinding } from "./binding-diff.js";
import { bindDirectTools, type BoundTable } from "./direct-binding.js";
import { checkDirectOptions, type CheckedDirectOptions } from "./direct-options.js";

function tool(group: string, name: string, description = `${name} things.`, extra: Partial<PinnedTool> = {}): PinnedTool {
  return { group, name, source: "mcp", description, inputSchema: { type: "object" }, policy: DEFAULT_POLICY, ...extra };
}

function options(value: unknown = {}): CheckedDirectOptions {
  const checked = checkDirectOptions(value);
  if (!checked.ok) assert.fail(JSON.stringify(checked.errors));
  return checked.options;
}

function bind(tools: PinnedTool[], value: unknown = {}): BoundTable {
  return bindDirectTools(toolsetOf(tools), options(value));
}

/** The names each line of a note lists, by its label (`Added`, `Removed`, `Changed`). */
function parseNote(note: string | undefined): { added: string[]; removed: string[]; changed: string[] } {
  const lists = { added: [] as string[], removed: [] as string[], changed: [] as string[] };
  for (const line of (note ?? "").split("\n").slice(1)) {
    const match = /^(Added|Removed|Changed): ([^.]*)\./.exec(line);
    assert.ok(match, `a note line lists tools: ${line}`);
    lists[match[1]!.toLowerCase() as keyof typeof lists] = match[2]!.split(", ");
  }
  return lists;
}

describe("the binding of direct tools", () => {
  it("is content-addressed: one id for one tool table, whatever the spelling of its options or the order of its tools", () => {
    const tools = [tool("github", "list_issues"), tool("slack", "post_message")];
    const a = bind(tools, { approval: { allow: ["github.*"] } });
    const b = bindDirectTools(
      toolsetOf([...tools].reverse()),
      options({ approval: { deny: [], allow: [{ id: "allow[0]", tool: "github.*", args: [] }], unmatched: "byRisk" }, results: { maxTokens: 16000 } }),
    );
    assert.equal(a.id, b.id);
    assert.match(a.id, /^bd_[0-9a-f]{64}$/);
    assert.notEqual(bind(tools, { approval: { allow: ["slack.*"] } }).id, a.id, "the approval rules are part of it");
    assert.notEqual(bind(tools, { lazy: { lowering: "menu" } }).id, a.id, "so is the lazy configuration");
    assert.notEqual(bind(tools, { errorEnvelope: { code: "/code", message: "/message" } }).id, a.id, "and the error envelope");
    assert.deepEqual(
      a.binding.tools.map((t) => [t.name, t.tool, t.maxTokens, t.overflow]),
      [
        ["fetch_blob", undefined, undefined, undefined],
        ["github_list_issues", "github.list_issues", 16000, "spill"],
        ["slack_post_message", "slack.post_message", 16000, "spill"],
      ],
    );
  });

  it("records per-tool budgets and which tools are lazy, with tool_find for a lazy table and no fetch_blob when nothing spills", () => {
    const tools = [
      tool("tiktok", "tool_list", "List every operation."),
      tool("tiktok", "campaign_get", "Get a campaign.", { annotations: { readOnlyHint: true } }),
      tool("tiktok", "campaign_create", "Create a campaign."),
    ];
    const table = bind(tools, {
      lazy: { lowering: "menu", readOnly: true },
      results: { overflow: "truncate", tools: [{ tool: "tool_list", maxTokens: 100_000, overflow: "spill" }] },
    });
    const byName = new Map(table.binding.tools.map((t) => [t.name, t]));
    assert.equal(byName.get("tiktok_tool_list")!.maxTokens, 100_000);
    assert.equal(byName.get("tiktok_campaign_create")!.overflow, "truncate");
    assert.deepEqual(
      table.binding.tools.filter((t) => t.lazy).map((t) => t.name),
      ["tiktok_campaign_get"],
    );
    assert.ok(byName.has("tool_find") && byName.has("fetch_blob"));
    assert.match(table.own.get("tool_find")!.description, /\ntiktok_campaign_get: Get a campaign\.$/);
    assert.equal(bind(tools, { results: { overflow: "truncate" } }).own.has("fetch_blob"), false);
  });

  it("names in its note exactly the tools added, removed and changed (property over random table pairs)", () => {
    const names = fc.constantFrom("a", "b", "c", "list_x", "get_y", "delete_z", "post", "read");
    const toolArb = fc.record({ group: fc.constantFrom("g", "h"), name: names, description: fc.constantFrom("One.", "Two.", "Three.") });
    const table = fc.uniqueArray(toolArb, { selector: (t) => `${t.group}.${t.name}`, maxLength: 12 });
    fc.assert(
      fc.property(table, table, (before, after) => {
        const previous = bind(before.map((t) => tool(t.group, t.name, t.description)));
        const next = bind(after.map((t) => tool(t.group, t.name, t.description)));
        const was = new Map(before.map((t) => [`${t.group}_${t.name}`, t.description]));
        const now = new Map(after.map((t) => [`${t.group}_${t.name}`, t.description]));
        const expected = {
          added: [...now.keys()].filter((n) => !was.has(n)).sort(),
          removed: [...was.keys()].filter((n) => !now.has(n)).sort(),
          changed: [...now.keys()].filter((n) => was.has(n) && was.get(n) !== now.get(n)).sort(),
        };
        const note = noteForBinding(previous.binding, next.binding);
        const parsed = parseNote(note);
        assert.deepEqual(parsed, expected);
        assert.equal(note === undefined, expected.added.length + expected.removed.length + expected.changed.length === 0);
      }),
      { numRuns: 300 },
    );
    assert.equal(noteForBinding(undefined, bind([tool("g", "a")]).binding), undefined, "a new session has no note");
  });

  it("says which sections of the configuration differ", () => {
    const tools = [tool("g", "a")];
    const diff = diffBindings(bind(tools).binding, bind([tool("g", "a", "Other.")], { approval: { unmatched: "ask" }, results: { maxTokens: 5 } }).binding);
    assert.deepEqual(diff.sections, ["toolset", "tools", "approval", "results"]);
    assert.deepEqual(diff.changed, ["g_a"]);
    assert.equal(
      bindingNote(diffBindings(bind(tools).binding, bind(tools, { approval: { unmatched: "ask" } }).binding)),
      undefined,
      "rules changed, tools did not: no note",
    );
  });
});

describe("signed pending approvals", () => {
  const key = "k".repeat(32);
  const asked = bind([tool("db", "insert")]);
  const pending: PendingApproval = { session: "ses_1", seq: 3, tool: "db.insert", argsDigest: "a".repeat(64), binding: asked.id };
  const signature = signPendingApproval(key, pending);

  it("decide under the same binding", () => {
    assert.deepEqual(checkPendingApproval({ key, pending, signature, current: bind([tool("db", "insert")]).binding, recorded: asked.binding }), {
      ok: true,
      drift: false,
    });
  });

  it("fail with config_mismatch under another binding, saying what changed and what to do, unless drift is allowed (which gives the note)", () => {
    const now = bind([tool("db", "insert"), tool("db", "drop")], { approval: { allow: ["*"] } });
    const check = checkPendingApproval({ key, pending, signature, current: now.binding, recorded: asked.binding });
    assert.equal(check.ok, false);
    assert.ok(!check.ok && check.code === "config_mismatch");
    assert.match(
      check.message,
      /call 3 of session ses_1 \(db\.insert\).*tools added: db_drop; toolset changed; approval changed\)\. Nothing was written\..*allowConfigDrift: true/i,
    );
    const drifted = checkPendingApproval({ key, pending, signature, current: now.binding, recorded: asked.binding, allowConfigDrift: true });
    assert.ok(drifted.ok && drifted.drift);
    assert.equal(drifted.note, "Your tools changed since the previous turn of this session.\nAdded: db_drop.");
  });

  it("refuse a record that was changed, or signed with another key", () => {
    const current = asked.binding;
    const tampered = checkPendingApproval({ key, pending: { ...pending, argsDigest: "b".repeat(64) }, signature, current, recorded: asked.binding });
    assert.ok(!tampered.ok && tampered.code === "bad_signature");
    const otherKey = checkPendingApproval({ key: "o".repeat(32), pending, signature, current, recorded: asked.binding });
    assert.ok(!otherKey.ok && otherKey.code === "bad_signature");
    const garbage = checkPendingApproval({ key, pending, signature: "short", current, recorded: asked.binding });
    assert.ok(!garbage.ok && garbage.code === "bad_signature");
    const movedBinding = checkPendingApproval({ key, pending, signature, current, recorded: bind([tool("x", "y")]).binding });
    assert.ok(!movedBinding.ok && movedBinding.code === "bad_signature", "the recorded binding must be the one signed");
    assert.throws(() => signPendingApproval("short", pending), /at least 16 bytes/);
  });
});

describe("direct options", () => {
  it("are validated all at once, each error naming its path", () => {
    const checked = checkDirectOptions({
      approval: { ask: [{ tool: "" }] },
      lazy: { lowering: "eager", tools: [3] },
      results: { maxTokens: 0, overflow: "drop", tools: [{ tool: "x", maxTokens: 1.5 }] },
      errorEnvelope: { code: "code", message: "/message" },
      cache: true,
    });
    assert.ok(!checked.ok);
    assert.deepEqual(checked.errors.map((e) => e.path).sort(), [
      "directTools.approval.ask[0].tool",
      "directTools.cache",
      "directTools.errorEnvelope.code",
      "directTools.lazy.lowering",
      "directTools.lazy.tools[0]",
      "directTools.results.maxTokens",
      "directTools.results.overflow",
      "directTools.results.tools[0].maxTokens",
    ]);
    const defaults = checkDirectOptions(undefined);
    assert.ok(defaults.ok);
    assert.deepEqual(defaults.options.results, { maxTokens: 16_000, overflow: "spill", tools: [] });
  });
});
