import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { JsonValue } from "@tapedeck/protocol";
import type { ToolCallAnswer, ToolCallRequest } from "@tapedeck/protocol/api";
import { VirtualClock } from "../clock.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { STDIO_MAIN } from "../test-support/mcp/fixture-clients.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";

after(() => testSandboxes().close());

/**
 * Eviction of direct tool sessions from the engine's memory, through the Engine API: a session
 * unused for the idle time (virtual) or beyond the cap of live sessions is dropped, counted by
 * `engine.direct.openSessions`, and the next request reads it again from its journal with nothing
 * lost — a repeated tool call id answered from the journal (the MCP fixture's effects log shows
 * each key once), a pending approval decided after the eviction sent once, the lazy tools loaded,
 * the sticky approval, the spilled blob and the seq numbering all as before. A session with a
 * call in flight is never evicted.
 */

const MINUTE = 60_000;
const FIXTURE = { mcpServers: { fx: { command: process.execPath, args: [STDIO_MAIN] } } };

function done(answer: ToolCallAnswer): string {
  assert.equal(answer.status, "done", JSON.stringify(answer));
  return answer.status === "done" ? String((answer.result as { text: string }).text) : "";
}

describe("direct sessions: eviction from memory", () => {
  it("evicts the least recently used session beyond the cap and idle sessions after the idle time; an evicted session answers from its journal and loses nothing", async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const t = await testEngine({ clock, directSessions: { idleMs: 10 * MINUTE, maxOpen: 2 } });
    try {
      const { id: toolset } = await t.engine.registerToolset(FIXTURE);
      const options = {
        toolset,
        approval: { ask: ["fx.effects", "fx.image"], allow: ["*"] },
        lazy: { lowering: "menu", tools: ["fx.echo"] },
        results: { maxTokens: 200 },
      } as const;
      const a = { session: "a", namespace: "ev" };
      const bound = await t.engine.direct.bind(a, options);
      const call = (toolCallId: string, name: string, input: JsonValue): ToolCallRequest => ({
        binding: bound.binding,
        api: "generic",
        toolCallId,
        name,
        input,
      });
      const effectsLog = async (toolCallId: string) => {
        const log = JSON.parse(done(await t.engine.direct.call(a, call(toolCallId, "fx_effects_log", {})))) as { keys: { key: string; attempts: number }[] };
        return log.keys.map((k) => [k.key, k.attempts]);
      };

      assert.equal(done(await t.engine.direct.call(a, call("find", "tool_find", { names: ["fx_echo"] }))).includes("fx_echo"), true);
      assert.equal((await t.engine.direct.call(a, call("e1", "fx_effects", { op: "one" }))).status, "pending");
      await t.engine.direct.decide(a, 1, "approved", {});
      const first = await t.engine.direct.call(a, call("e1", "fx_effects", { op: "one" }));
      assert.equal((JSON.parse(done(first)) as { key: string }).key, `${bound.id}/1`);
      assert.equal((await t.engine.direct.call(a, call("i1", "fx_image", {}))).status, "pending");
      await t.engine.direct.decide(a, 2, "approved", { always: true });
      assert.equal((await t.engine.direct.call(a, call("e2", "fx_effects", { op: "two" }))).status, "pending", "seq 3 waits for a human");
      const big = done(await t.engine.direct.call(a, call("big", "fx_echo_plain", { text: Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") })));
      const handle = /(blob_[0-9a-f]{40})/.exec(big)?.[1];
      assert.ok(handle, big);
      assert.equal(t.engine.direct.openSessions, 1);

      // Beyond the cap: a, the least recently used, goes (its pending call is in its journal).
      await t.engine.direct.bind({ session: "b", namespace: "ev" }, options);
      assert.equal(t.engine.direct.openSessions, 2);
      await t.engine.direct.bind({ session: "c", namespace: "ev" }, options);
      assert.equal(t.engine.direct.openSessions, 2, "the cap evicted one session");

      // a is read again from its journal: the repeated tool call id is answered, not sent again.
      assert.deepEqual(await t.engine.direct.call(a, call("e1", "fx_effects", { op: "one" })), first);
      assert.equal(t.engine.direct.openSessions, 2, "a is live again, and the least recently used other session went");
      // The lazy tool tool_find loaded is still loaded; the sticky approval still holds.
      assert.deepEqual(JSON.parse(done(await t.engine.direct.call(a, call("echo", "fx_echo", { text: "hi" })))), { text: "hi" });
      assert.equal((await t.engine.direct.call(a, call("i2", "fx_image", {}))).status, "done", "approved always for this session");
      // The spilled result reads back.
      assert.match(done(await t.engine.direct.call(a, call("page", "fetch_blob", { handle, offset: 0 }))), /line 0\nline 1\n/);
      // The approval asked before the eviction is decided after it, and its call is sent once.
      assert.deepEqual(
        (await t.engine.direct.approvals(a)).map((p) => p.seq),
        [3],
      );
      await t.engine.direct.decide(a, 3, "approved", {});
      assert.equal((JSON.parse(done(await t.engine.direct.call(a, call("e2", "fx_effects", { op: "two" })))) as { key: string }).key, `${bound.id}/3`);
      // Seqs go on where the journal left them.
      const next = await t.engine.direct.call(a, call("e3", "fx_effects", { op: "three" }));
      assert.equal(next.status === "pending" ? next.approval.id : JSON.stringify(next), `${bound.id}/7`);
      assert.deepEqual(await effectsLog("log-1"), [
        [`${bound.id}/1`, 1],
        [`${bound.id}/3`, 1],
      ]);

      // Idle: ten minutes later (virtual), the next request evicts every session unused since.
      clock.setTimer(clock.now() + 10 * MINUTE, () => {});
      assert.equal(await clock.virtual.advance(), true);
      await t.engine.direct.bind({ session: "c", namespace: "ev" }, options);
      assert.equal(t.engine.direct.openSessions, 1, "only the session just used is live");
      await t.engine.direct.decide(a, 7, "approved", {});
      assert.equal((JSON.parse(done(await t.engine.direct.call(a, call("e3", "fx_effects", { op: "three" })))) as { key: string }).key, `${bound.id}/7`);
      assert.deepEqual((await effectsLog("log-2")).length, 3);
    } finally {
      await t.cleanup();
    }
  });

  it("an approval that expires while its session is evicted is listed no more, and the model is told it expired when the call is handled again; nothing is sent", async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const harness = new ToolHarness({ "w.write": () => "sent" });
    const t = await testEngine({ clock, hostTools: harness.module(), directSessions: { maxOpen: 1 } });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.write"]));
      const a = { session: "a" };
      const bound = await t.engine.direct.bind(a, { toolset: id, approval: { ask: ["w.write"] } });
      const write = { binding: bound.binding, api: "generic", toolCallId: "w1", name: "w_write", input: {} } as const;
      assert.equal((await t.engine.direct.call(a, write)).status, "pending");
      await t.engine.direct.bind({ session: "b" }, { toolset: id });
      assert.equal(t.engine.direct.openSessions, 1, "a waits for a human only: evicted");
      clock.setTimer(clock.now() + 24 * 60 * MINUTE, () => {});
      assert.equal(await clock.virtual.advance(), true);
      assert.deepEqual(await t.engine.direct.approvals(a), []);
      assert.deepEqual(await t.engine.direct.approvals({ labels: {} }), []);
      assert.match(done(await t.engine.direct.call(a, write)), /the approval expired\. Nothing was sent\./);
      assert.equal(harness.calls.length, 0);
    } finally {
      await t.cleanup();
    }
  });

  it("never evicts a session whose call is in flight: its outcome is journaled and answered, the call sent once; once settled it is evicted", async () => {
    const harness = new ToolHarness({ "w.write": () => "written" });
    harness.hold("w.write");
    const t = await testEngine({ hostTools: harness.module(), directSessions: { maxOpen: 1 } });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.write"]));
      const x = { session: "x" };
      const bound = await t.engine.direct.bind(x, { toolset: id, approval: { allow: ["*"] } });
      const write = { binding: bound.binding, api: "generic", toolCallId: "t1", name: "w_write", input: {} } as const;
      const stop = new AbortController();
      const inFlight = t.engine.direct.call(x, write, stop.signal);
      await harness.heldCount(1);
      // The request goes away; the call stays in flight, in no request.
      stop.abort();
      await assert.rejects(inFlight, { code: "closed" });
      await t.engine.direct.bind({ session: "y" }, { toolset: id });
      assert.equal(t.engine.direct.openSessions, 2, "x has a call in flight: over the cap, not evicted");
      // A call sent again (what the code under test must not do) would be answered, not held: a failure, not a hang.
      harness.stopHolding("w.write");
      harness.release(0);
      assert.equal(done(await t.engine.direct.call(x, write)), "written");
      assert.equal(harness.calls.length, 1);
      await t.engine.direct.bind({ session: "z" }, { toolset: id });
      assert.equal(t.engine.direct.openSessions, 1, "settled, x and y are evicted");
      assert.equal(done(await t.engine.direct.call(x, write)), "written");
      assert.equal(harness.calls.length, 1);
    } finally {
      await t.cleanup();
    }
  });
});
