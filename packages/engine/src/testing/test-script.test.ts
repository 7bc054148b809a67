import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { TestResult } from "../engine.js";
import { McpToolSource } from "../sources/mcp/mcp-tool-source.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { findSecrets } from "../test-support/leak-scan.js";
import { startHttpFixture } from "../test-support/mcp/http-fixture.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";

after(() => testSandboxes().close());

const YEAR = 365 * 86_400_000;
const TOOLS = ["gh.issue", "gh.search", "gh.merge", "slack.post"];

async function setup() {
  const harness = new ToolHarness(Object.fromEntries(TOOLS.map((tool) => [tool, (args: unknown) => ({ real: tool, args })])));
  const t = await testEngine({ hostTools: harness.module() });
  const { id } = await t.engine.registerToolset(harnessToolset(TOOLS, { policies: { "gh.merge": { approval: true } } }));
  const test = async (source: string, scenario?: unknown, input?: unknown): Promise<Extract<TestResult, { kind: "tested" }>> => {
    const result = await t.engine.test({
      toolset: id,
      source: `import { gh, slack } from "tapedeck:tools";\n${source}`,
      ...(scenario === undefined ? {} : { scenario }),
      ...(input === undefined ? {} : { input: input as never }),
    });
    if (result.kind !== "tested") throw new Error(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n"));
    return result;
  };
  return { ...t, harness, toolsetId: id, test };
}

describe("test_script", () => {
  it("a year of sleep passes in virtual time; the script sees the virtual clock; nothing is sent or stored", async () => {
    const t = await setup();
    try {
      const result = await t.test(`export default async () => { const t0 = Date.now(); await sleep("1y"); await sleep(1000); return Date.now() - t0; };`, {
        start: "2027-01-01T00:00:00Z",
      });
      assert.equal(result.status, "completed");
      assert.equal(result.output, YEAR + 1000);
      assert.equal(result.virtualMs, YEAR + 1000);
      assert.deepEqual(
        result.calls.map((c) => [c.tool, c.answeredBy, c.atMs, c.endedAtMs]),
        [
          ["tapedeck.sleep", "builtin", 0, YEAR],
          ["tapedeck.sleep", "builtin", YEAR, YEAR + 1000],
        ],
      );
      assert.equal(t.harness.calls.length, 0);
      assert.deepEqual(await t.engine.listRuns(), [], "the test run lives in its own store");
    } finally {
      await t.cleanup();
    }
  });

  it("mocks answer per tool: one result for every call, a sequence in order, errors, delays in virtual time, args matching", async () => {
    const t = await setup();
    try {
      const result = await t.test(
        `import { ToolError } from "tapedeck:tools";
        export default async () => {
          const [a, b] = await Promise.all([gh.issue({ n: 1 }), gh.issue({ n: 2 })]);
          const first = await gh.search({ q: "x" });
          let second: unknown;
          try { await gh.search({ q: "y" }); } catch (e) { second = e instanceof ToolError ? e.code : "?"; }
          const ops = await slack.post({ channel: "#ops", text: "hi" });
          let other: unknown;
          try { await slack.post({ channel: "#dev", text: "hi" }); } catch (e) { other = (e as ToolError).code; }
          return { a, b, first, second, ops, other };
        };`,
        {
          tools: {
            "gh.issue": { result: { title: "Bug" }, delay: "2s" },
            "gh.search": [
              { result: [1], delay: "1m" },
              { error: { code: "rate_limited", message: "slow down", retryable: true }, delay: "30s" },
            ],
            "slack.post": [{ args: { channel: "#ops" }, result: { ok: true } }],
          },
        },
      );
      assert.deepEqual(result.output, { a: { title: "Bug" }, b: { title: "Bug" }, first: [1], second: "rate_limited", ops: { ok: true }, other: "no_mock" });
      assert.equal(result.virtualMs, 2000 + 60_000 + 30_000, "concurrent delays overlap; sequential ones add up");
      const noMock = result.calls.find((c) => c.error?.code === "no_mock");
      assert.match(
        noMock?.error?.message ?? "",
        /has no more results for slack\.post .* matching these arguments: slack\.post\(\{"channel":"#dev","text":"hi"\}\)\. Add tools\["slack\.post"\]/,
      );
      assert.deepEqual(
        result.calls.map((c) => c.answeredBy),
        ["mock", "mock", "mock", "mock", "mock", "none"],
      );
      assert.equal(t.harness.calls.length, 0);
    } finally {
      await t.cleanup();
    }
  });

  it("signals arrive at their virtual times; a timeout fires first when it is earlier; an unanswered wait ends the test as waiting", async () => {
    const t = await setup();
    try {
      const result = await t.test(
        `export default async () => {
          let early: unknown;
          try { early = await signal("go", { timeout: "1h" }); } catch (e: any) { early = e.code; }
          const late = await signal<{ by: string }>("go", { timeout: "3h" });
          return { early, late, at: Date.now() };
        };`,
        { start: 0, signals: [{ name: "go", at: "2h", payload: { by: "ann" } }] },
      );
      assert.deepEqual(result.output, { early: "timeout", late: { by: "ann" }, at: 7_200_000 });

      const stuck = await t.test(`export default async () => { await sleep("1d"); return signal("never"); };`);
      assert.equal(stuck.status, "waiting");
      assert.deepEqual(stuck.waits, [{ kind: "signal", seq: 2, name: "never" }]);
      assert.equal(stuck.virtualMs, 86_400_000);
    } finally {
      await t.cleanup();
    }
  });

  it("approval decisions come from the scenario, after their delay; without one the test ends waiting for approval", async () => {
    const t = await setup();
    try {
      const script = `export default async () => { try { return await gh.merge({ pr: 1 }); } catch (e: any) { return e.code + ": " + e.message; } };`;
      const approved = await t.test(script, {
        tools: { "gh.merge": { result: "merged" } },
        approvals: [{ tool: "gh.merge", decision: "approve", after: "10m" }],
      });
      assert.deepEqual([approved.output, approved.virtualMs, approved.calls[0]?.decision], ["merged", 600_000, "approved"]);
      const rejected = await t.test(script, { approvals: [{ tool: "gh.merge", decision: "reject", reason: "freeze" }] });
      assert.equal(rejected.output, "approval_rejected: The call to gh.merge was rejected: freeze. It was not sent.");
      const pending = await t.test(script, { tools: { "gh.merge": { result: "merged" } } });
      assert.equal(pending.status, "waiting");
      assert.deepEqual(pending.waits, [{ kind: "approval", seq: 1, tool: "gh.merge", args: { pr: 1 } }]);
    } finally {
      await t.cleanup();
    }
  });

  it("from_run answers calls from what a real run recorded, so a corrected script is tested without sending anything", async () => {
    const t = await setup();
    try {
      const started = await t.engine.start({
        toolset: t.toolsetId,
        source: `import { gh } from "tapedeck:tools";\nexport default async () => { const i = await gh.issue({ n: 7 }); await sleep(10); return i; };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      await started.end;
      const sent = t.harness.calls.length;
      const result = await t.test(
        `export default async () => { const i: any = await gh.issue({ n: 7 }); const s = await gh.search({ q: "other" }); return { real: i.real, s }; };`,
        {
          from_run: started.runId,
          tools: { "gh.search": { result: "mocked" } },
        },
      );
      assert.deepEqual(result.output, { real: "gh.issue", s: "mocked" });
      assert.deepEqual(
        result.calls.map((c) => c.answeredBy),
        ["recorded", "mock"],
      );
      assert.equal(t.harness.calls.length, sent, "nothing sent");
    } finally {
      await t.cleanup();
    }
  });

  it("a bad scenario or script is refused with what to fix", async () => {
    const t = await setup();
    try {
      await assert.rejects(t.test(`export default 1;`, { tools: { "gh.issue": { result: 1, reslt: 2 } } }), {
        code: "invalid_request",
        message: /tools\["gh\.issue"\] has an unknown key "reslt"; allowed: args, result, error, delay/,
      });
      await assert.rejects(t.test(`export default 1;`, { signals: [{ name: "x", at: "soon" }] }), {
        code: "invalid_request",
        message: /signals\[0\]\.at "soon" is not a duration/,
      });
      await assert.rejects(t.test(`export default 1;`, { from_run: "run_missing" }), { code: "not_found" });
      const refused = await t.engine.test({ toolset: t.toolsetId, source: `export default nope;` });
      assert.equal(refused.kind, "refused");
    } finally {
      await t.cleanup();
    }
  });
});

describe("cassettes", () => {
  it("a run exported as a cassette replays as a scenario to the same output, without the MCP server and without its credential", async () => {
    const secret = `tok-${randomUUID()}`;
    process.env.TAPEDECK_TEST_CASSETTE_TOKEN = secret;
    const fixture = await startHttpFixture({ requireBearer: () => secret });
    const t = await testEngine({ mcp: new McpToolSource() });
    try {
      const spec = { mcpServers: { fx: { url: fixture.url, headers: { Authorization: "Bearer ${TAPEDECK_TEST_CASSETTE_TOKEN}" } } } };
      const { id } = await t.engine.registerToolset(spec);
      const source = `import { fx } from "tapedeck:tools";\nexport default async () => { const a = await fx.echo({ text: "one" }); const s = await signal<string>("go"); const b = await fx.echo({ text: s }); return [a, b]; };`;
      const started = await t.engine.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error("refused");
      await t.engine.settled(started.runId);
      await t.engine.signal(started.runId, "go", "two");
      const end = await started.end;
      assert.equal(end.status, "completed");

      const cassette = await t.engine.cassette(started.runId);
      const text = JSON.stringify(cassette);
      assert.ok(!text.includes(secret), "no credential in the cassette");
      assert.deepEqual(
        cassette.recorded.map((r) => r.tool),
        ["fx.echo", "fx.echo"],
      );
      assert.deepEqual(
        cassette.signals.map((s) => [s.name, s.payload]),
        [["go", "two"]],
      );
      await fixture.close();

      const replayed = await t.engine.test({ toolset: id, source, scenario: JSON.parse(text) as unknown });
      assert.equal(replayed.kind, "tested");
      if (replayed.kind !== "tested") return;
      assert.deepEqual([replayed.status, replayed.output], ["completed", end.status === "completed" ? end.output : undefined]);
      assert.deepEqual(
        replayed.calls.filter((c) => c.tool === "fx.echo").map((c) => c.answeredBy),
        ["recorded", "recorded"],
      );
      assert.deepEqual(await findSecrets(t.engine, t.dataDir, [secret]), []);
    } finally {
      delete process.env.TAPEDECK_TEST_CASSETTE_TOKEN;
      await t.cleanup();
      await fixture.close().catch(() => {});
    }
  });
});
