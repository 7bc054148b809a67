import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { toolFailure, type JournalEntry, type JsonValue } from "@tapedeck/protocol";
import { systemClock, type Clock } from "./clock.js";
import { Engine } from "./engine.js";
import type { RunEnd } from "@tapedeck/protocol";
import type { SandboxFactory } from "./sandbox/sandbox.js";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "./sources/tool-source.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { harnessToolset } from "./test-support/tool-harness.js";
import { testSandboxes } from "./test-support/engines.js";

// test-budget-seconds: 600 (one to two minutes on an idle machine: 65 random scripts, each resumed from every prefix of its journal; scripts/run-tests.mjs)
/**
 * The property that makes the runtime trustworthy: for random scripts (sequential and
 * concurrent calls, races, loops, Date, Math.random, caught and uncaught errors) against
 * deterministic tools,
 *   1. replaying a run's journal gives the same end and sends no call, and
 *   2. resuming from every prefix of the journal (any point a crash could leave) ends exactly
 *      as the uninterrupted run did.
 */

after(() => testSandboxes().close());

/** Tool answers depend only on the arguments; `delay` (setImmediate turns) shuffles completion order. */
class DeterministicTools implements ToolSource {
  sent = 0;
  constructor(private readonly delays: (args: JsonValue) => number) {}

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    this.sent++;
    const x = (request.args as { x: number }).x;
    for (let i = this.delays(request.args); i > 0; i--) await new Promise((resolve) => setImmediate(resolve));
    if (request.tool.name === "fail") return { kind: "failure", failure: toolFailure(`e${x % 3}`, `failed on ${x}`) };
    return { kind: "result", value: { v: (x * 31 + 7) % 1000 } };
  }
}

const statement: fc.Arbitrary<string> = fc.oneof(
  fc.nat(99).map((n) => `out.push(await t.f({ x: ${n} }));`),
  fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map(([a, b, c]) => `out.push(await Promise.all([t.f({ x: ${a} }), t.f({ x: ${b} }), t.f({ x: ${c} })]));`),
  fc.tuple(fc.nat(99), fc.nat(99)).map(([a, b]) => `out.push(await Promise.race([t.f({ x: ${a} }), t.f({ x: ${b} })]));`),
  fc.nat(99).map((n) => `try { out.push(await t.fail({ x: ${n} })); } catch (e) { out.push("caught " + (e as ToolError).code + " " + (e as ToolError).seq); }`),
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat(99)).map(([k, n]) => `for (let i = 0; i < ${k}; i++) out.push(await t.f({ x: i + ${n} }));`),
  fc.constant(`out.push(Date.now());`),
  fc.constant(`out.push(Math.floor(Math.random() * 1e6));`),
  fc.constant(`out.push(await t.f({ x: Math.floor(Math.random() * 100) }));`),
  fc.nat(99).map((n) => `{ const p = t.f({ x: ${n} }); out.push(await t.f({ x: ${n + 1} })); out.push(await p); }`),
  fc.nat(99).map((n) => `await Promise.allSettled([t.fail({ x: ${n} }), t.f({ x: ${n} })]).then((r) => out.push(r.map((s) => s.status)));`),
  fc.nat(20).map((n) => `if (out.length > ${n + 8}) throw new Error("too long: " + out.length);`),
);

const script = fc.array(statement, { minLength: 1, maxLength: 8 }).map(
  (lines) => `import { t, ToolError } from "tapedeck:tools";
export default async () => {
  const out: unknown[] = [];
  ${lines.join("\n  ")}
  return out;
};`,
);

const TOOLSET = harnessToolset(["t.f", "t.fail"]);

function endKey(end: RunEnd): string {
  return end.status === "completed" ? JSON.stringify(end.output) : end.status === "failed" ? `failed: ${end.error.message}` : `cancelled: ${end.reason}`;
}

async function openEngine(tools: ToolSource, clock: Clock, sandboxes: SandboxFactory) {
  return Engine.open({ store: SqliteStore.open({ path: ":memory:", durability: "off" }), sources: { host: tools }, clock, sandboxes });
}

function steppingClock(): Clock {
  let now = Date.UTC(2026, 0, 1);
  return { now: () => (now += 1000), setTimer: (at, fire) => systemClock.setTimer(at, fire) };
}

const frozenClock: Clock = { now: () => Date.UTC(2026, 0, 1), setTimer: (at, fire) => systemClock.setTimer(at, fire) };

const sandboxes: SandboxFactory = { create: (o) => testSandboxes().create(o), close: () => Promise.resolve() };

describe("replay property", () => {
  it("replaying a journal reproduces the run's end and sends no call", async () => {
    await fc.assert(
      fc.asyncProperty(script, fc.array(fc.nat(3), { minLength: 1, maxLength: 16 }), async (source, delaySeed) => {
        const tools = new DeterministicTools((args) => delaySeed[((args as { x: number }).x ?? 0) % delaySeed.length]!);
        const engine = await openEngine(tools, steppingClock(), sandboxes);
        try {
          const { id } = await engine.registerToolset(TOOLSET);
          const started = await engine.start({ toolset: id, source });
          if (started.kind !== "started") throw new Error(`refused: ${started.diagnostics[0]?.message}`);
          const end = await started.end;
          const sent = tools.sent;
          const verified = await engine.verify(started.runId);
          assert.ok(verified.ok, verified.ok ? "" : verified.problem);
          assert.equal(endKey(verified.end!), endKey(end));
          assert.equal(tools.sent, sent, "replay sent a call");
        } finally {
          await engine.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it("resuming from every prefix of the journal ends as the uninterrupted run did", async () => {
    await fc.assert(
      fc.asyncProperty(script, async (source) => {
        const tools = new DeterministicTools(() => 0);
        const engine = await openEngine(tools, frozenClock, sandboxes);
        let original: { end: RunEnd; entries: JournalEntry[]; run: Awaited<ReturnType<Engine["getRun"]>>; toolset: Awaited<ReturnType<Engine["toolset"]>> };
        try {
          const { id } = await engine.registerToolset(TOOLSET);
          const started = await engine.start({ toolset: id, source });
          if (started.kind !== "started") throw new Error("refused");
          const end = await started.end;
          original = {
            end,
            entries: await engine.journal(started.runId, 0, 100_000),
            run: await engine.getRun(started.runId),
            toolset: await engine.toolset(id),
          };
        } finally {
          await engine.close();
        }
        for (let length = 1; length < original.entries.length; length++) {
          const store = SqliteStore.open({ path: ":memory:", durability: "off" });
          await store.putToolset(original.toolset.toolset);
          const { run } = original;
          await store.createRun(
            {
              id: run.id,
              toolsetId: run.toolsetId,
              source: run.source,
              js: run.js,
              sourceMap: run.sourceMap,
              input: run.input,
              status: "running",
              createdAt: run.createdAt,
            },
            original.entries.slice(0, length),
          );
          const resumedEngine = await Engine.open({ store, sources: { host: new DeterministicTools(() => 0) }, clock: frozenClock, sandboxes });
          try {
            const [resumed] = await resumedEngine.resume(run.id);
            const end = await resumed!.end;
            assert.equal(endKey(end), endKey(original.end), `resumed after ${length} of ${original.entries.length} entries`);
            const journal = await resumedEngine.journal(run.id, 0, 100_000);
            assert.deepEqual(journal.slice(0, length), original.entries.slice(0, length), "the journal is append-only");
          } finally {
            await resumedEngine.close();
          }
        }
      }),
      { numRuns: 25 },
    );
  });
});
