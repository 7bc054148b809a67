import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { JournalEntry } from "@tapedeck/protocol";
import type { EngineEvent, EngineOptions } from "./engine.js";
import type { SandboxFactory } from "./sandbox/sandbox.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";
import { ManualClock } from "./test-support/manual-clock.js";

after(() => testSandboxes().close());

const DAY = 86_400_000;

/** The shared sandbox pool, counting the sandboxes alive: a parked run must hold none. */
function countingSandboxes(): { factory: SandboxFactory; live: () => number } {
  let live = 0;
  return {
    live: () => live,
    factory: {
      async create(options) {
        const sandbox = await testSandboxes().create(options);
        live++;
        let disposed = false;
        return {
          start: () => sandbox.start(),
          deliverEach: (d) => sandbox.deliverEach(d),
          replay: (d) => sandbox.replay(d),
          dispose: async () => {
            if (!disposed) live--;
            disposed = true;
            await sandbox.dispose();
          },
        };
      },
      close: () => Promise.resolve(),
    },
  };
}

async function setup(tools: Record<string, (args: never) => unknown> = {}, options: EngineOptions & { approval?: readonly string[] } = {}) {
  const clock = new ManualClock();
  const implementations = { "w.step": (args: { n?: number }) => ({ n: args.n ?? 0 }), ...tools };
  const harness = new ToolHarness(implementations);
  const sandboxes = countingSandboxes();
  const events: EngineEvent[] = [];
  const t = await testEngine({ hostTools: harness.module(), clock, sandboxes: sandboxes.factory, ...options });
  t.engine.on((event) => events.push(event));
  const policies = Object.fromEntries((options.approval ?? []).map((tool) => [tool, { approval: true }]));
  const { id } = await t.engine.registerToolset(harnessToolset(Object.keys(implementations), { policies }));
  const start = async (source: string, input?: unknown) => {
    const started = await t.engine.start({
      toolset: id,
      source: `import { w } from "tapedeck:tools";\n${source}`,
      ...(input === undefined ? {} : { input: input as never }),
    });
    if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n"));
    return started;
  };
  return { ...t, clock, harness, sandboxes, events, toolsetId: id, start };
}

const kinds = (journal: readonly JournalEntry[]) => journal.map((e) => e.kind);

describe("sleep", () => {
  it("a long sleep parks the run: no sandbox held, waiting with its wake time; the timer wakes it and the script sees the time", async () => {
    const t = await setup();
    try {
      const started = await t.start(
        `export default async () => { const before = Date.now(); await sleep("10d"); return { slept: Date.now() - before, step: await w.step({ n: 1 }) }; };`,
      );
      const pause = await t.engine.settled(started.runId);
      const until = t.clock.now() + 10 * DAY;
      assert.deepEqual(pause, { status: "waiting", waits: [{ kind: "sleep", seq: 1, until }], wakeAt: until });
      const run = await t.engine.getRun(started.runId);
      assert.deepEqual([run.status, run.wakeAt], ["waiting", until]);
      assert.equal(t.sandboxes.live(), 0, "a parked run holds no sandbox");
      assert.equal(t.clock.pending, 1, "one timer for the engine, none for the run");
      assert.deepEqual(
        t.events.map((e) => e.type),
        ["run.waiting"],
      );

      t.clock.tick(10 * DAY - 1);
      assert.equal((await t.engine.getRun(started.runId)).status, "waiting", "not a millisecond early");
      t.clock.tick(1);
      const end = await started.end;
      assert.deepEqual(end, { status: "completed", output: { slept: 10 * DAY, step: { n: 1 } } });
      const journal = await t.engine.journal(started.runId);
      assert.deepEqual(kinds(journal), ["run.started", "call.scheduled", "call.completed", "call.scheduled", "call.completed", "run.completed"]);
      assert.deepEqual(journal[1], {
        index: 1,
        at: until - 10 * DAY,
        kind: "call.scheduled",
        seq: 1,
        tool: "tapedeck.sleep",
        args: { ms: 10 * DAY, until },
        key: `${started.runId}/1`,
      });
      assert.equal(t.sandboxes.live(), 0);
      const done = await t.engine.getRun(started.runId);
      assert.deepEqual([done.waits, done.wakeAt], [undefined, undefined]);
      assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end });
    } finally {
      await t.cleanup();
    }
  });

  it("a sleep shorter than the hold keeps the sandbox and never parks", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => { await sleep(1500); await sleep("1s"); return "done"; };`);
      await t.clock.timers(1);
      assert.equal(t.sandboxes.live(), 1);
      t.clock.tick(1500);
      await t.clock.timers(1);
      t.clock.tick(1000);
      assert.deepEqual(await started.end, { status: "completed", output: "done" });
      assert.deepEqual(
        t.events.map((e) => e.type),
        ["run.ended"],
        "it never parked",
      );
    } finally {
      await t.cleanup();
    }
  });

  it("wakes after a restart: a new engine resumes the overdue run when it opens", async () => {
    const t = await setup();
    const started = await t.start(`export default async () => { await sleep("1d"); return w.step({ n: 2 }); };`);
    await t.engine.settled(started.runId);
    await t.engine.close();
    const clock = new ManualClock(t.clock.now() + DAY + 5);
    const engine = await t.reopen({ hostTools: t.harness.module(), clock });
    try {
      assert.equal(clock.pending, 1, "the new engine armed its wake timer for the overdue run");
      const end = engine.end(started.runId);
      clock.tick(0);
      assert.deepEqual(await end, { status: "completed", output: { n: 2 } });
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("setTimeout runs its callback after a durable sleep; clearTimeout keeps it from running; a throwing callback fails the run", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => {
        const seen: string[] = [];
        const cleared = setTimeout(() => seen.push("cleared"), 10);
        clearTimeout(cleared);
        await new Promise<void>((resolve) => setTimeout((a: string, b: string) => { seen.push(a + b); resolve(); }, "1d" as unknown as number, "x", "y"));
        return seen;
      };`);
      await t.clock.timers(2);
      t.clock.tick(10);
      await t.engine.settled(started.runId);
      t.clock.tick(DAY);
      assert.deepEqual(await started.end, { status: "completed", output: ["xy"] });

      const failing = await t.start(
        `export default async () => { setTimeout(() => { throw new Error("boom in a timer"); }, 5); await sleep(3 * 86400000); return "unreachable"; };`,
      );
      await t.clock.timers(2);
      t.clock.tick(10);
      const end = await failing.end;
      assert.equal(end.status, "failed");
      assert.match(end.status === "failed" ? end.error.message : "", /boom in a timer/);
    } finally {
      await t.cleanup();
    }
  });

  it("a malformed duration is a TypeError that says what a duration is; more than 10 years is refused", async () => {
    const t = await setup();
    try {
      for (const [duration, pattern] of [
        [`"10 days" as any`, /"10 days" is not a duration; use a number of milliseconds or a string like "500ms", "30s"/],
        [`-5`, /not a finite number of milliseconds >= 0/],
        [`"11000d"`, /longer than 10 years/],
      ] as const) {
        const started = await t.start(`export default async () => { await sleep(${duration}); };`);
        const end = await started.end;
        assert.equal(end.status, "failed");
        assert.match(end.status === "failed" ? end.error.message : "", pattern);
      }
    } finally {
      await t.cleanup();
    }
  });
});

describe("signals", () => {
  it("a parked run wakes on its signal and gets the payload; a signal sent before it is awaited is kept", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => {
        const first = await signal<{ ok: boolean }>("approved");
        await sleep("2d");
        const second = await signal<string>("note");
        return { first, second };
      };`);
      const pause = await t.engine.settled(started.runId);
      assert.deepEqual(pause, { status: "waiting", waits: [{ kind: "signal", seq: 1, name: "approved" }] });
      assert.equal(t.sandboxes.live(), 0);
      assert.equal((await t.engine.signal(started.runId, "note", "kept for later")).duplicate, false);
      assert.equal((await t.engine.getRun(started.runId)).status, "waiting", "a signal nobody waits for does not wake the run");
      await t.engine.signal(started.runId, "approved", { ok: true });
      await t.engine.settled(started.runId);
      t.clock.tick(2 * DAY);
      assert.deepEqual(await started.end, { status: "completed", output: { first: { ok: true }, second: "kept for later" } });
      assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end: await started.end });
    } finally {
      await t.cleanup();
    }
  });

  it("each signal is taken once, oldest first; the same key delivers once", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => [await signal("n"), await signal("n"), await signal("n")];`);
      await t.engine.settled(started.runId);
      await t.engine.signal(started.runId, "n", 1, { key: "call_1" });
      assert.equal((await t.engine.signal(started.runId, "n", 99, { key: "call_1" })).duplicate, true);
      await t.engine.signal(started.runId, "n", 2);
      const last = await t.engine.signal(started.runId, "n", 3, { key: "call_3" });
      assert.deepEqual(await started.end, { status: "completed", output: [1, 2, 3] });
      // A retried request after its signal ended the run: it was sent, not refused.
      assert.deepEqual(await t.engine.signal(started.runId, "n", 3, { key: "call_3" }), { signalId: last.signalId, duplicate: true });
      await assert.rejects(t.engine.signal(started.runId, "n", 4, { key: "call_4" }), /has ended \(completed\); the signal "n" was not sent/);
    } finally {
      await t.cleanup();
    }
  });

  it("a timeout is a ToolError the script can catch; the signal that comes later is kept", async () => {
    const t = await setup();
    try {
      const started = await t.start(`import { ToolError } from "tapedeck:tools";
        export default async () => {
          try { await signal("late", { timeout: "1h" }); return "got it"; }
          catch (e) { if (e instanceof ToolError) return { code: e.code, message: e.message }; throw e; }
        };`);
      const pause = await t.engine.settled(started.runId);
      assert.equal(pause?.status === "waiting" ? pause.wakeAt : undefined, t.clock.now() + 3_600_000);
      t.clock.tick(3_600_000);
      assert.deepEqual(await started.end, {
        status: "completed",
        output: { code: "timeout", message: 'No signal "late" arrived within 1h. Catch this error to go on without it, or wait longer.' },
      });
      await assert.rejects(t.engine.signal(started.runId, "late", 1), { code: "conflict", message: /has ended \(completed\); the signal "late" was not sent/ });
    } finally {
      await t.cleanup();
    }
  });

  it("signals while the run is live (a tool call in flight) reach it without parking", async () => {
    const t = await setup();
    t.harness.hold("w.step");
    try {
      const started = await t.start(`export default async () => { const [s, r] = await Promise.all([signal("go"), w.step({ n: 5 })]); return { s, r }; };`);
      await t.harness.heldCount(1);
      await t.engine.signal(started.runId, "go", "now");
      t.harness.release(0);
      assert.deepEqual(await started.end, { status: "completed", output: { s: "now", r: { n: 5 } } });
      assert.ok(!t.events.some((e) => e.type === "run.waiting"));
    } finally {
      await t.cleanup();
    }
  });

  it("bad signals are refused with what to do", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => signal("x");`);
      await t.engine.settled(started.runId);
      await assert.rejects(t.engine.signal(started.runId, "", 1), { code: "invalid_request", message: /needs a name/ });
      await assert.rejects(t.engine.signal(started.runId, "x", 10n as never), { code: "invalid_request", message: /not JSON/ });
      await assert.rejects(t.engine.signal("run_nope", "x", 1), { code: "not_found" });
    } finally {
      await t.cleanup();
    }
  });
});

describe("webhooks", () => {
  it("webhook(name) gives an unguessable URL bound to the run; a POST body becomes the signal; the token is stored hashed", async () => {
    const t = await setup({}, { webhookBaseUrl: "https://hooks.example.com/" });
    try {
      const started = await t.start(`export default async () => { const { url } = await webhook("paid"); console.log(url); return signal("paid"); };`);
      await t.engine.settled(started.runId);
      const journal = await t.engine.journal(started.runId);
      const url = (journal.find((e) => e.kind === "call.completed") as unknown as { result: { url: string } }).result.url;
      const match = /^https:\/\/hooks\.example\.com\/hooks\/([A-Za-z0-9_-]{32})$/.exec(url);
      assert.ok(match, url);
      const token = match[1]!;
      // Another token: its last character changed (to one it is not, or the token would be the same).
      await assert.rejects(t.engine.deliverWebhook(`${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}`, {}), { code: "not_found" });
      assert.deepEqual(await t.engine.deliverWebhook(token, { amount: 5 }), { runId: started.runId, name: "paid", signalId: 1 });
      assert.deepEqual(await started.end, { status: "completed", output: { amount: 5 } });
      const db = new Database(join(t.dataDir, "tapedeck.db"), { readonly: true });
      try {
        const rows = db.prepare("SELECT * FROM webhooks").all() as { token_hash: string }[];
        assert.equal(rows.length, 1);
        assert.notEqual(rows[0]!.token_hash, token);
      } finally {
        db.close();
      }
    } finally {
      await t.cleanup();
    }
  });
});

describe("approvals", () => {
  it("a call needing approval is not sent until approved; the decision is journaled; then it is sent once with its key", async () => {
    const t = await setup({ "w.merge": (args: { pr: number }) => `merged ${args.pr}` }, { approval: ["w.merge"] });
    try {
      const started = await t.start(`export default async () => w.merge({ pr: 7 });`);
      const pause = await t.engine.settled(started.runId);
      assert.deepEqual(pause, { status: "waiting", waits: [{ kind: "approval", seq: 1, tool: "w.merge", args: { pr: 7 } }] });
      assert.equal(t.harness.calls.length, 0);
      assert.deepEqual(await t.engine.pendingDecisions(), [
        { kind: "approval", seq: 1, tool: "w.merge", args: { pr: 7 }, id: `${started.runId}/1`, runId: started.runId },
      ]);
      assert.deepEqual(
        t.events.map((e) => e.type),
        ["approval.requested", "run.waiting"],
      );
      await t.engine.approve(started.runId, 1, { reason: "looks good" });
      assert.deepEqual(await started.end, { status: "completed", output: "merged 7" });
      assert.deepEqual(
        t.harness.calls.map((c) => [c.tool, c.key, c.attempt]),
        [["w.merge", `${started.runId}/1`, 1]],
      );
      const journal = await t.engine.journal(started.runId);
      assert.deepEqual(kinds(journal), ["run.started", "call.scheduled", "call.decided", "call.completed", "run.completed"]);
      assert.deepEqual(journal[2], { index: 2, at: journal[2]!.at, kind: "call.decided", seq: 1, decision: "approved", reason: "looks good" });
      assert.deepEqual(await t.engine.pendingDecisions(), []);
      await assert.rejects(t.engine.approve(started.runId, 1), { code: "conflict", message: /not waiting for a decision \(the run has ended: completed\)/ });
      assert.deepEqual(await t.engine.verify(started.runId), { ok: true, end: await started.end });
    } finally {
      await t.cleanup();
    }
  });

  it("a rejected call fails with approval_rejected; a script that swallows it cannot make the call happen", async () => {
    const t = await setup({ "w.merge": () => "merged" }, { approval: ["w.merge"] });
    try {
      const started = await t.start(`export default async () => {
        const tries: string[] = [];
        for (let i = 0; i < 2; i++) {
          try { await w.merge({ pr: i }); tries.push("merged"); } catch (e: any) { tries.push(e.code + ": " + e.message); }
        }
        return tries;
      };`);
      await t.engine.settled(started.runId);
      await t.engine.reject(started.runId, 1, { reason: "not on a Friday" });
      await t.engine.settled(started.runId);
      assert.deepEqual(
        (await t.engine.pendingDecisions({ runId: started.runId })).map((d) => d.seq),
        [2],
        "the second try waits for its own decision",
      );
      await t.engine.reject(started.runId, 2);
      const end = await started.end;
      assert.deepEqual(end, {
        status: "completed",
        output: [
          "approval_rejected: The call to w.merge was rejected: not on a Friday. It was not sent.",
          "approval_rejected: The call to w.merge was rejected. It was not sent.",
        ],
      });
      assert.equal(t.harness.calls.length, 0, "never sent");
    } finally {
      await t.cleanup();
    }
  });

  it("a call waits for approval while other calls run; the decision survives a restart", async () => {
    const t = await setup({ "w.merge": () => "merged" }, { approval: ["w.merge"] });
    const started = await t.start(`export default async () => Promise.all([w.merge({ pr: 1 }), w.step({ n: 1 }), w.step({ n: 2 })]);`);
    while ((await t.engine.pendingDecisions()).length === 0) await t.engine.settled(started.runId);
    await t.engine.close();
    const engine = await t.reopen({ hostTools: t.harness.module(), clock: t.clock });
    try {
      assert.equal((await engine.getRun(started.runId)).status, "waiting");
      await engine.approve(started.runId, 1);
      assert.deepEqual(await engine.end(started.runId), { status: "completed", output: ["merged", { n: 1 }, { n: 2 }] });
      assert.equal(t.harness.calls.filter((c) => c.tool === "w.merge").length, 1);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });
});

describe("cancel and fork with waits", () => {
  it("cancelling a parked run ends it without waking it", async () => {
    const t = await setup();
    try {
      const started = await t.start(`export default async () => { await sleep("30d"); return w.step({}); };`);
      await t.engine.settled(started.runId);
      assert.deepEqual(await t.engine.cancel(started.runId, "no longer needed"), { status: "cancelled", reason: "no longer needed" });
      assert.deepEqual(await started.end, { status: "cancelled", reason: "no longer needed" });
      const run = await t.engine.getRun(started.runId);
      assert.deepEqual([run.status, run.waits, run.wakeAt], ["cancelled", undefined, undefined]);
      t.clock.tick(31 * DAY);
      assert.equal(t.harness.calls.length, 0);
    } finally {
      await t.cleanup();
    }
  });

  it("a fork reuses the parent's finished sleeps and received signals instead of waiting again", async () => {
    const t = await setup();
    try {
      const parent = await t.start(`export default async () => { await sleep("7d"); const s = await signal<number>("go"); return w.step({ n: s * 100 }); };`);
      await t.engine.settled(parent.runId);
      t.clock.tick(7 * DAY);
      await t.engine.settled(parent.runId);
      await t.engine.signal(parent.runId, "go", 4);
      await parent.end;
      const fork = await t.engine.fork({
        parent: parent.runId,
        source: `import { w } from "tapedeck:tools";\nexport default async () => { await sleep("7d"); const s = await signal<number>("go"); return w.step({ n: s + 1 }); };`,
      });
      if (fork.kind !== "started") throw new Error("refused");
      assert.deepEqual(await fork.end, { status: "completed", output: { n: 5 } });
      const reused = (await t.engine.journal(fork.runId)).filter((e) => e.kind === "call.completed" && e.reusedFrom);
      assert.equal(reused.length, 2);
    } finally {
      await t.cleanup();
    }
  });
});
