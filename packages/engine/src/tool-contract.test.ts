import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ToolsetSpec } from "@tapedeck/protocol";
import { EngineError } from "./errors.js";
import { tempDir, testEngine, testSandboxes } from "./test-support/engines.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import fc from "fast-check";
import { VirtualClock } from "./clock.js";
import { ManualClock } from "./test-support/manual-clock.js";
import { slidingWindowViolation } from "./library/rate-limit/test-support/window-check.js";

/**
 * The one tool contract's policies at call intake, for every kind of tool: approval as rules on
 * the arguments, each with the reason the approver is shown (a host tool's from the toolset's
 * policy entry, a library tool's from its definition), and refusals by rule.
 */

after(() => testSandboxes().close());

const RUST_SOURCES: ToolsetSpec["policies"] = {
  "code.write_file": {
    approval: {
      kind: "rules",
      rules: [
        { action: "ask", when: [{ pointer: "/path", matches: "\\.(rs|toml)$" }], reason: "Writes Rust sources or Cargo manifests", summary: "Write {/path}" },
        { action: "deny", when: [{ pointer: "/path", matches: "^/" }], reason: "Absolute paths are outside the project" },
      ],
      otherwise: { kind: "never" },
    },
  },
};

describe("approval as rules on the arguments", () => {
  it("a host tool asks for approval only when its policy's rules say, shows the reason, and refuses what a deny rule matches", async () => {
    const harness = new ToolHarness({ "code.write_file": (args) => `wrote ${(args as { path: string }).path}` });
    const t = await testEngine({ hostTools: harness.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["code.write_file"], { policies: RUST_SOURCES }));
      const started = await t.engine.start({
        toolset: id,
        source: `import { code, ToolError } from "tapedeck:tools";
          export default async () => {
            const md = await code.write_file({ path: "README.md" });
            let abs = "";
            try { await code.write_file({ path: "/etc/hosts" }); } catch (e) { abs = e instanceof ToolError ? e.code + ": " + e.message : String(e); }
            const rs = await code.write_file({ path: "src/main.rs" });
            return [md, abs, rs];
          };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      const settled = await t.engine.settled(started.runId);
      assert.equal(settled?.status, "waiting");
      const pending = await t.engine.pendingDecisions({ runId: started.runId });
      assert.deepEqual(
        pending.map((p) => [p.seq, p.tool, p.kind === "approval" ? p.reason : undefined]),
        [[3, "code.write_file", "Writes Rust sources or Cargo manifests"]],
      );
      assert.deepEqual(
        harness.calls.map((c) => (c.args as { path: string }).path),
        ["README.md"],
        "the .md write went at once; the absolute path was never sent",
      );
      await t.engine.approve(started.runId, 3);
      assert.deepEqual(await started.end, {
        status: "completed",
        output: [
          "wrote README.md",
          "refused: code.write_file is refused by its approval rules: Absolute paths are outside the project. Nothing was sent.",
          "wrote src/main.rs",
        ],
      });
    } finally {
      await t.cleanup();
    }
  });

  it("a library tool's own rules apply (files.write asks before writing a shell script), and the toolset's policy can turn them off", async () => {
    const folder = tempDir("tapedeck-library-");
    const t = await testEngine({ libraryFolder: folder.path });
    try {
      const script = `import { files } from "tapedeck:tools";
        export default async () => { await files.write({ path: "notes.md", content: "n" }); await files.write({ path: "deploy.sh", content: "echo hi" }); return "done"; };`;
      const guarded = await t.engine.registerToolset({ library: { files: {} } });
      assert.match(guarded.declarations.prompt, /^files\.write\(.*\) → .* · Some calls \(by their arguments\) need a person's approval and wait for it · /m);
      assert.match(
        guarded.declarations.typescript,
        /@approval Some calls \(by their arguments\) need a person's approval and wait for it: Changes git's own files/,
      );
      const started = await t.engine.start({ toolset: guarded.id, source: script });
      if (started.kind !== "started") throw new Error("refused");
      assert.equal((await t.engine.settled(started.runId))?.status, "waiting");
      const pending = await t.engine.pendingDecisions({ runId: started.runId });
      assert.deepEqual(
        pending.map((p) => [p.seq, p.tool, p.kind === "approval" ? p.reason : undefined]),
        [[2, "files.write", "Writes a shell script"]],
      );
      await t.engine.reject(started.runId, 2, { reason: "no scripts" });
      assert.equal((await started.end).status, "failed");

      const open = await t.engine.registerToolset({ library: { files: {} }, policies: { "files.write": { approval: false } } });
      assert.notEqual(open.id, guarded.id);
      const again = await t.engine.start({ toolset: open.id, source: script });
      if (again.kind !== "started") throw new Error("refused");
      assert.deepEqual(await again.end, { status: "completed", output: "done" });
    } finally {
      await t.cleanup();
      folder.cleanup();
    }
  });

  it("refuses a malformed approval or rate limit in a policy at registration, naming where", async () => {
    const t = await testEngine();
    try {
      const refused = (policy: unknown) =>
        t.engine.registerToolset({ ...harnessToolset(["code.write_file"]), policies: { "code.write_file": policy } }).then(
          () => assert.fail("registered"),
          (error: unknown) => (error instanceof EngineError && error.code === "invalid_toolset" ? error.message : assert.fail(String(error))),
        );
      assert.equal(
        await refused({
          approval: { kind: "rules", rules: [{ action: "ask", when: [{ pointer: "path", matches: "x" }], reason: "r" }], otherwise: { kind: "never" } },
        }),
        'policies["code.write_file"].approval is malformed: approval.rules[0].when[0].pointer: the JSON pointer "path" must start with "/" (or be "" for the whole value)',
      );
      assert.match(await refused({ approval: { kind: "rules", rules: "all" } }), /approval is malformed: it does not have the shape of an approval/);
      assert.equal(await refused({ rateLimit: { perMinute: 0 } }), 'policies["code.write_file"].rateLimit.perMinute: 0 is not a whole number from 1 to 100000');
      assert.equal(
        await refused({ rateLimit: { perMinute: 5, onLimit: "later" } }),
        'policies["code.write_file"].rateLimit.onLimit: "later" is not fail or wait',
      );
      assert.equal(await refused({ risk: "extreme" }), 'policies["code.write_file"].risk must be "low", "medium" or "high"');
    } finally {
      await t.cleanup();
    }
  });
});

describe("rate limits at call intake", () => {
  const LIMITED = harnessToolset(["api.ping"], { policies: { "api.ping": { rateLimit: { perMinute: 3, perHour: 10 } } } });
  const WINDOWS = [
    { ms: 60_000, limit: 3 },
    { ms: 3_600_000, limit: 10 },
  ];

  it("in every sliding window, the calls accepted are at most the limit (test_script, virtual clock); refusals say when to retry", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset(LIMITED);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 5, maxLength: 30 }), async (gaps) => {
          const tested = await t.engine.test({
            toolset: id,
            source: `import { api, ToolError } from "tapedeck:tools";
              export default async () => {
                const accepted: number[] = []; const refused: number[] = [];
                for (const gap of ${JSON.stringify(gaps)}) {
                  await sleep(gap);
                  try { await api.ping({}); accepted.push(Date.now()); }
                  catch (e) { if (!(e instanceof ToolError) || e.code !== "rate_limited") throw e; refused.push((e.details as { retryAfterMs: number }).retryAfterMs); }
                }
                return { accepted, refused };
              };`,
            scenario: { start: 0, tools: { "api.ping": { result: "pong" } } },
          });
          assert.equal(tested.kind, "tested");
          if (tested.kind !== "tested") return;
          assert.equal(tested.status, "completed", JSON.stringify(tested.error));
          const { accepted, refused } = tested.output as { accepted: number[]; refused: number[] };
          assert.equal(accepted.length + refused.length, gaps.length);
          assert.equal(slidingWindowViolation(accepted, WINDOWS), undefined);
          for (const wait of refused) assert.ok(wait > 0 && wait <= 3_600_000, String(wait));
        }),
        { numRuns: 12 },
      );
    } finally {
      await t.cleanup();
    }
  });

  it("a refused call is journaled rate_limited, never sent, and the window survives a restart of the engine", async () => {
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const harness = new ToolHarness({ "api.ping": () => "pong" });
    const t = await testEngine({ hostTools: harness.module(), clock });
    try {
      const { id } = await t.engine.registerToolset(LIMITED);
      const script = `import { api, ToolError } from "tapedeck:tools";
        export default async (n: number) => { const out: string[] = [];
          for (let i = 0; i < n; i++) { try { out.push(String(await api.ping({ i }))); } catch (e) { out.push(e instanceof ToolError ? e.code : String(e)); } }
          return out; };`;
      const first = await t.engine.start({ toolset: id, source: script, input: 2, namespace: "acme" });
      if (first.kind !== "started") throw new Error("refused");
      assert.deepEqual(await first.end, { status: "completed", output: ["pong", "pong"] });
      await t.engine.close();
      const again = await t.reopen({ hostTools: harness.module(), clock });
      try {
        const second = await again.start({ toolset: id, source: script, input: 2, namespace: "acme" });
        if (second.kind !== "started") throw new Error("refused");
        assert.deepEqual(await second.end, { status: "completed", output: ["pong", "rate_limited"] }, "the first engine's two calls still count");
        const failed = (await again.journal(second.runId)).find((e) => e.kind === "call.failed");
        assert.deepEqual(
          failed?.kind === "call.failed" && [failed.seq, failed.error.code, failed.error.retryable, (failed.error.details as { limit: number }).limit],
          [2, "rate_limited", true, 3],
        );
        assert.match(
          failed?.kind === "call.failed" ? failed.error.message : "",
          /^api\.ping may be called 3 times a minute for this end user, and that many calls were made: try again in 60 s/,
        );
        assert.equal(harness.calls.length, 3, "the refused call was never sent");
        // Another end user has windows of its own.
        const other = await again.start({ toolset: id, source: script, input: 1, namespace: "globex" });
        assert.deepEqual(other.kind === "started" && (await other.end), { status: "completed", output: ["pong"] });
        assert.deepEqual(await again.verify(second.runId), { ok: true, end: { status: "completed", output: ["pong", "rate_limited"] } });
      } finally {
        await again.close();
      }
    } finally {
      await t.cleanup().catch(() => {});
    }
  });

  it("checks the limit before approval: a refused call never asks anyone", async () => {
    const harness = new ToolHarness({ "api.ping": () => "pong" });
    const t = await testEngine({ hostTools: harness.module() });
    try {
      const { id } = await t.engine.registerToolset(
        harnessToolset(["api.ping"], { policies: { "api.ping": { approval: true, rateLimit: { perMinute: 1 } } } }),
      );
      const script = `import { api, ToolError } from "tapedeck:tools";
        export default async () => { try { return await api.ping({}); } catch (e) { return e instanceof ToolError ? e.code : String(e); } };`;
      const first = await t.engine.start({ toolset: id, source: script });
      if (first.kind !== "started") throw new Error("refused");
      assert.equal((await t.engine.settled(first.runId))?.status, "waiting");
      assert.deepEqual(
        (await t.engine.pendingDecisions({ runId: first.runId })).map((p) => p.seq),
        [1],
      );
      const second = await t.engine.start({ toolset: id, source: script });
      if (second.kind !== "started") throw new Error("refused");
      assert.deepEqual(await second.end, { status: "completed", output: "rate_limited" });
      await t.engine.approve(first.runId, 1);
      assert.deepEqual(await first.end, { status: "completed", output: "pong" });
    } finally {
      await t.cleanup();
    }
  });
});

describe('rate limits with onLimit "wait"', () => {
  const T0 = Date.UTC(2030, 0, 1);

  it("calls over the limit wait durably for the window, then proceed; concurrent waiters never burst over it (virtual clock)", async () => {
    const clock = new VirtualClock(T0);
    const harness = new ToolHarness({ "api.ping": () => clock.now() - T0 });
    const t = await testEngine({ hostTools: harness.module(), clock });
    try {
      const { id } = await t.engine.registerToolset(
        harnessToolset(["api.ping"], { policies: { "api.ping": { rateLimit: { perMinute: 3, perHour: 7, onLimit: "wait" } } } }),
      );
      const started = await t.engine.start({
        toolset: id,
        source: `import { api } from "tapedeck:tools";
          export default async () => {
            const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => api.ping({ i })));
            await sleep(10_000);
            const late = [await api.ping({ i: 8 }), await api.ping({ i: 9 })];
            return [...burst, ...late];
          };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      const end = await started.end;
      assert.equal(end.status, "completed", JSON.stringify(end));
      const sent = (end.status === "completed" ? end.output : []) as number[];
      assert.equal(harness.calls.length, 10, "every call was sent once");
      assert.deepEqual(
        sent.slice(0, 8).sort((a, b) => a - b),
        [0, 0, 0, 60_000, 60_000, 60_000, 120_000, 3_600_000],
        "three at once, three when the minute's window frees, one more a minute later, and the eighth when the hour's (7) frees",
      );
      assert.deepEqual(sent.slice(8), [3_610_000, 3_610_000], "calls after a sleep go at once when both windows have room");
      const accepted = sent.map((at) => T0 + at).sort((a, b) => a - b);
      assert.equal(
        slidingWindowViolation(accepted, [
          { ms: 60_000, limit: 3 },
          { ms: 3_600_000, limit: 7 },
        ]),
        undefined,
      );
      const journal = await t.engine.journal(started.runId);
      assert.ok(journal.some((e) => e.kind === "call.throttled"));
      assert.equal(journal.filter((e) => e.kind === "call.admitted").length, 5, "each waiting call journals its admission once");
      assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end });
    } finally {
      await t.cleanup();
    }
  });

  it("test_script waits in virtual time: the script sees the calls go as the window frees", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset(
        harnessToolset(["api.ping"], { policies: { "api.ping": { rateLimit: { perMinute: 2, onLimit: "wait" } } } }),
      );
      const tested = await t.engine.test({
        toolset: id,
        source: `import { api } from "tapedeck:tools";
          export default async () => { const at: number[] = []; for (let i = 0; i < 5; i++) { await api.ping({ i }); at.push(Date.now()); } return at; };`,
        scenario: { start: 0, tools: { "api.ping": { result: "pong" } } },
      });
      assert.equal(tested.kind === "tested" && tested.status, "completed", JSON.stringify(tested));
      assert.deepEqual(tested.kind === "tested" && tested.output, [0, 0, 60_000, 60_000, 120_000]);
    } finally {
      await t.cleanup();
    }
  });

  it("the wait survives closing and reopening the engine: the run parks, wakes at the window's end, takes its place and sends; replay verifies", async () => {
    const clock = new ManualClock(T0);
    const harness = new ToolHarness({ "api.ping": (args: { i: number }) => `pong ${args.i}` });
    const t = await testEngine({ hostTools: harness.module(), clock });
    const { id } = await t.engine.registerToolset(
      harnessToolset(["api.ping"], { policies: { "api.ping": { approval: true, rateLimit: { perHour: 1, onLimit: "wait" } } } }),
    );
    const started = await t.engine.start({
      toolset: id,
      source: `import { api } from "tapedeck:tools";
        export default async () => [await api.ping({ i: 1 }), await api.ping({ i: 2 })];`,
    });
    if (started.kind !== "started") throw new Error("refused");
    assert.equal((await t.engine.settled(started.runId))?.status, "waiting");
    await t.engine.approve(started.runId, 1);
    const waiting = await t.engine.settled(started.runId);
    assert.equal(waiting?.status, "waiting");
    assert.deepEqual(waiting?.status === "waiting" && waiting.waits, [{ kind: "rate_limit", seq: 2, tool: "api.ping", until: T0 + 3_600_000 }]);
    assert.deepEqual(await t.engine.pendingDecisions({ runId: started.runId }), [], "a call that waits for its window asks no one yet");
    assert.equal(harness.calls.length, 1);
    await t.engine.close();

    // Reopened before the window frees: the call waits for its recorded `until`, and the window is not checked again meanwhile.
    const later = new ManualClock(T0 + 600_000);
    const engine = await t.reopen({ hostTools: harness.module(), clock: later });
    try {
      assert.equal(later.pending, 1, "the new engine armed its wake timer for the waiting run");
      assert.deepEqual(
        (await engine.journal(started.runId)).filter((e) => e.kind === "call.throttled").map((e) => e.kind === "call.throttled" && e.until),
        [T0 + 3_600_000],
      );
      later.tick(3_000_000 + 5);
      while ((await engine.pendingDecisions({ runId: started.runId })).length === 0) await engine.settled(started.runId);
      assert.deepEqual(
        (await engine.pendingDecisions({ runId: started.runId })).map((p) => p.seq),
        [2],
        "admitted after the restart, it asks for its approval",
      );
      await engine.approve(started.runId, 2);
      const end = await engine.end(started.runId);
      assert.deepEqual(end, { status: "completed", output: ["pong 1", "pong 2"] });
      assert.equal(harness.calls.length, 2);
      const kinds = (await engine.journal(started.runId)).filter((e) => e.kind === "call.throttled" || e.kind === "call.admitted");
      assert.deepEqual(
        kinds.map((e) => [e.kind, e.seq]),
        [
          ["call.throttled", 2],
          ["call.admitted", 2],
        ],
      );
      assert.deepEqual(await engine.verify(started.runId), { ok: true, end });
    } finally {
      await engine.close();
      await t.cleanup().catch(() => {});
    }
  });
});
