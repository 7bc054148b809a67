import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { toolFailure } from "@tapedeck/protocol";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "./sources/tool-source.js";
import type { JournalEntry } from "@tapedeck/protocol";
import { SqliteStore } from "./store/sqlite-store.js";
import type { RunPatch, Store } from "./store/store.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

/** A source whose first `interruptions` attempts of every call are interrupted (a dropped connection). */
class FlakySource implements ToolSource {
  readonly attempts: { key: string; attempt: number }[] = [];
  constructor(private readonly interruptions: number) {}
  call(request: ToolCallRequest): Promise<ToolOutcome> {
    this.attempts.push({ key: request.idempotencyKey, attempt: request.attempt });
    if (request.attempt <= this.interruptions) return Promise.resolve({ kind: "interrupted", reason: "connection dropped" });
    if ((request.args as { fail?: boolean }).fail)
      return Promise.resolve({ kind: "failure", failure: toolFailure("rate_limited", "slow down", { retryable: true }) });
    return Promise.resolve({ kind: "result", value: { attempt: request.attempt } });
  }
}

const SCRIPT = `import { net, ToolError } from "tapedeck:tools";
export default async (input: { fail?: boolean }) => {
  try { return await net.send(input); } catch (e) { return { code: (e as ToolError).code, message: (e as ToolError).message }; }
};`;

async function run(interruptions: number, policy: "retry" | "at_most_once", input: object = {}) {
  const source = new FlakySource(interruptions);
  const t = await testEngine({ sources: { host: source } });
  try {
    const { runId, end } = await runScript(t.engine, harnessToolset(["net.send"], { policies: { "net.send": { onInterruption: policy } } }), SCRIPT, input);
    return { source, end, runId, journal: await t.engine.journal(runId) };
  } finally {
    await t.cleanup();
  }
}

describe("dispatcher policies on live interruptions", () => {
  it("retry: re-sends with the same key, journaling each new attempt, until an answer", async () => {
    const { source, end, runId, journal } = await run(2, "retry");
    assert.deepEqual(end, { status: "completed", output: { attempt: 3 } });
    assert.deepEqual(
      source.attempts,
      [1, 2, 3].map((attempt) => ({ key: `${runId}/1`, attempt })),
    );
    assert.deepEqual(
      journal.filter((e) => e.kind === "call.attempt").map((e) => (e.kind === "call.attempt" ? [e.attempt, e.reason] : [])),
      [
        [2, "connection dropped"],
        [3, "connection dropped"],
      ],
    );
  });

  it("retry: gives up after 5 attempts with too_many_attempts", async () => {
    const { source, end } = await run(10, "retry");
    assert.equal(source.attempts.length, 5);
    assert.equal(end.status === "completed" && (end.output as { code: string }).code, "too_many_attempts");
  });

  it("at_most_once: never re-sends; the script gets outcomeUnknown", async () => {
    const { source, end } = await run(1, "at_most_once");
    assert.equal(source.attempts.length, 1);
    assert.equal(end.status === "completed" && (end.output as { code: string }).code, "outcomeUnknown");
  });

  it("a tool that answers with an error is never re-sent, even under retry", async () => {
    const { source, end } = await run(0, "retry", { fail: true });
    assert.equal(source.attempts.length, 1);
    assert.deepEqual(end, { status: "completed", output: { code: "rate_limited", message: "slow down" } });
  });
});

describe("engine limits and edges", () => {
  it("stops an infinite loop with a limit error, and the next run in the same engine works", async () => {
    const t = await testEngine({ limits: { sandbox: { cpuMsPerStep: 200 } } });
    try {
      const { end } = await runScript(t.engine, {}, `export default () => { for (;;) {} };`);
      assert.equal(end.status, "failed");
      if (end.status === "failed") {
        assert.equal(end.error.kind, "limit");
        assert.match(end.error.message, /200 ms/);
      }
      assert.deepEqual((await runScript(t.engine, {}, `export default 6 * 7;`)).end, { status: "completed", output: 42 });
    } finally {
      await t.cleanup();
    }
  });

  it("a call issued but not awaited when the script ends is not sent, and a warning says so", async () => {
    const tools = new ToolHarness({ "n.notify": () => "sent" });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["n.notify"]),
        `import { n } from "tapedeck:tools";\nexport default () => { void n.notify({}); return "done"; };`,
      );
      assert.deepEqual(end, { status: "completed", output: "done" });
      assert.equal(tools.calls.length, 0);
      const warning = (await t.engine.journal(runId)).find((e) => e.kind === "log");
      assert.match(warning?.kind === "log" ? warning.message : "", /call #1 n\.notify was not sent: the script ended before awaiting it/);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses an output larger than one recorded value may be", async () => {
    const t = await testEngine({ limits: { maxValueBytes: 1000 } });
    try {
      const { end } = await runScript(t.engine, {}, `export default "x".repeat(5000);`);
      assert.equal(end.status, "failed");
      if (end.status === "failed") {
        assert.equal(end.error.kind, "output");
        assert.match(end.error.message, /5002 bytes; a run's output may be at most 1000 bytes/);
      }
    } finally {
      await t.cleanup();
    }
  });

  it("fails a run that reaches its journal limit, cleanly", async () => {
    const tools = new ToolHarness({ "a.b": () => 1 });
    const t = await testEngine({ hostTools: tools.module(), limits: { maxJournalEntries: 20 } });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["a.b"]),
        `import { a } from "tapedeck:tools";\nexport default async () => { for (let i = 0; i < 100; i++) await a.b(); };`,
      );
      assert.equal(end.status, "failed");
      if (end.status === "failed") assert.equal(end.error.kind, "limit");
      assert.ok((await t.engine.journal(runId)).length <= 20);
      assert.ok(tools.calls.length < 12);
    } finally {
      await t.cleanup();
    }
  });

  it("holds the journal limit on the last step too: a script that logs past it and returns is failed, its journal within the limit", async () => {
    const tools = new ToolHarness({ "a.b": () => 1 });
    const t = await testEngine({ hostTools: tools.module(), limits: { maxJournalEntries: 20 } });
    try {
      for (const source of [
        `export default () => { for (let i = 0; i < 100; i++) console.log(i); return "done"; };`,
        `import { a } from "tapedeck:tools";\nexport default async () => { await a.b(); for (let i = 0; i < 100; i++) console.log(i); return "done"; };`,
      ]) {
        const { runId, end } = await runScript(t.engine, harnessToolset(["a.b"]), source);
        assert.equal(end.status, "failed", source);
        if (end.status === "failed") assert.match(end.error.message, /The run's journal reached its limit of 20 entries/);
        const journal = await t.engine.journal(runId);
        assert.ok(journal.length <= 20, `${journal.length} entries`);
        assert.equal(journal.at(-1)?.kind, "run.failed");
      }
    } finally {
      await t.cleanup();
    }
  });
});

describe("after the end", () => {
  it("an interruption arriving while the end commits is dropped: nothing is journaled or sent after it", async () => {
    let interruptSlow: (() => void) | undefined;
    const sends: string[] = [];
    const source: ToolSource = {
      call: (request) => {
        sends.push(`${request.tool.name}#${request.attempt}`);
        if (request.tool.name === "slow") return new Promise((resolve) => (interruptSlow = () => resolve({ kind: "interrupted", reason: "dropped" })));
        return Promise.resolve({ kind: "result", value: 1 });
      },
    };
    // The slow call's connection drops exactly while the run's end is being committed.
    const inner = SqliteStore.open({ path: ":memory:", durability: "off" });
    const store: Store = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === "append") {
          return (runId: string, entries: readonly JournalEntry[], patch?: RunPatch) => {
            const written = target.append(runId, entries, patch);
            if (entries.some((e) => e.kind === "run.completed")) interruptSlow?.();
            return written;
          };
        }
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const t = await testEngine({ sources: { host: source }, store });
    try {
      const { runId, end } = await runScript(
        t.engine,
        harnessToolset(["t.slow", "t.fast"]),
        `import { t } from "tapedeck:tools";\nexport default async () => { const p = t.slow({}); p.catch(() => {}); await t.fast({}); return "done"; };`,
      );
      assert.deepEqual(end, { status: "completed", output: "done" });
      const journal = await t.engine.journal(runId);
      assert.equal(journal.at(-1)?.kind, "run.completed", "nothing is journaled after the end");
      assert.deepEqual(sends.sort(), ["fast#1", "slow#1"], "nothing is sent after the end");
      assert.ok((await t.engine.verify(runId)).ok);
    } finally {
      await t.cleanup();
    }
  });
});
