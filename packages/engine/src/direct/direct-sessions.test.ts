import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { ToolCallAnswer } from "@tapedeck/protocol/api";
import { VirtualClock } from "../clock.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";

after(() => testSandboxes().close());

/**
 * Direct tool sessions through the Engine API (`engine.direct`), with host tools served in
 * process: what the journal makes of an engine that stops mid-call (the tool's policy decides:
 * sent again with the same key, or `outcomeUnknown`), approvals that expire in virtual time, and
 * concurrent calls of one turn. The HTTP and SDK layers are tested in @tapedeck/server.
 */

const ref = { session: "conv", namespace: "dora" };

function text(answer: ToolCallAnswer): string {
  assert.equal(answer.status, "done", JSON.stringify(answer));
  return answer.status === "done" ? String((answer.result as { text: string }).text) : "";
}

async function interrupted(policy: "retry" | "at_most_once") {
  const first = new ToolHarness({ "w.write": () => "first engine" });
  first.hold("w.write");
  const t = await testEngine({ hostTools: first.module() });
  const { id } = await t.engine.registerToolset(harnessToolset(["w.write"], { policies: { "w.write": { onInterruption: policy } } }));
  const bound = await t.engine.direct.bind(ref, { toolset: id, approval: { allow: ["*"] } });
  const call = { binding: bound.binding, api: "generic", toolCallId: "toolu_1", name: "w_write", input: { n: 1 } } as const;
  void t.engine.direct.call(ref, call).catch(() => {});
  await first.heldCount(1);
  await t.engine.close();
  return { t, call, sessionId: bound.id, first };
}

describe("direct sessions: an engine that stops mid-call", () => {
  it("retry: the next engine sends the interrupted call again with the same key, once, and answers it", async () => {
    const { t, call, sessionId, first } = await interrupted("retry");
    const second = new ToolHarness({ "w.write": () => "second engine" });
    const engine = await t.reopen({ hostTools: second.module() });
    try {
      assert.equal(text(await engine.direct.call(ref, call)), "second engine");
      assert.deepEqual(
        [...first.calls, ...second.calls].map((c) => [c.key, c.attempt]),
        [
          [`${sessionId}/1`, 1],
          [`${sessionId}/1`, 2],
        ],
      );
      // Handled again: answered from the journal, not sent.
      assert.equal(text(await engine.direct.call(ref, call)), "second engine");
      assert.equal(second.calls.length, 1);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("at_most_once: the next engine does not send it again; the model is told the outcome is unknown", async () => {
    const { t, call } = await interrupted("at_most_once");
    const second = new ToolHarness({ "w.write": () => "must not be called" });
    const engine = await t.reopen({ hostTools: second.module() });
    try {
      const answer = await engine.direct.call(ref, call);
      assert.equal(answer.status === "done" && answer.isError, true);
      assert.match(text(answer), /was interrupted, and this tool is never sent twice, so whether it took effect is unknown/);
      assert.equal(second.calls.length, 0);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });
});

describe("direct sessions: approvals", () => {
  it("expires an approval nobody gave in 24 hours (virtual time): the model is told, nothing was sent, and it cannot be approved later", async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const harness = new ToolHarness({ "w.write": () => "sent" });
    const t = await testEngine({ hostTools: harness.module(), clock });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.write"]));
      const bound = await t.engine.direct.bind(ref, { toolset: id });
      const call = { binding: bound.binding, api: "generic", toolCallId: "toolu_x", name: "w_write", input: {} } as const;
      const asked = await t.engine.direct.call(ref, call);
      assert.equal(asked.status, "pending");
      assert.equal(asked.status === "pending" ? asked.approval.expiresAt - asked.approval.askedAt : 0, 24 * 60 * 60 * 1000);
      assert.equal(await clock.virtual.advance(), true);
      const answer = await t.engine.direct.call(ref, call);
      assert.match(text(answer), /waited 1d for an approval that never came, and the approval expired\. Nothing was sent\./);
      assert.equal(harness.calls.length, 0);
      await assert.rejects(t.engine.direct.decide(ref, 1, "approved", {}), { code: "conflict", message: /expired/ });
      assert.deepEqual(await t.engine.direct.approvals(ref), []);
    } finally {
      await t.cleanup();
    }
  });

  it("runs the calls of one turn concurrently: one waiting for approval holds none of the others; an 'always' approval covers the tool's later calls", async () => {
    const harness = new ToolHarness({ "w.read": () => "read", "w.write": () => "written" });
    harness.hold("w.read");
    const t = await testEngine({ hostTools: harness.module() });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.read", "w.write"]));
      const bound = await t.engine.direct.bind(ref, { toolset: id, approval: { allow: ["w.read"], ask: ["w.write"] } });
      const call = (toolCallId: string, name: string) => ({ binding: bound.binding, api: "generic", toolCallId, name, input: {}, wait: 30 }) as const;
      const write = t.engine.direct.call(ref, call("a", "w_write"));
      const read = t.engine.direct.call(ref, call("b", "w_read"));
      await harness.heldCount(1);
      // The read is in flight while the write waits for a human: both were scheduled, neither holds the other.
      const [pending] = await t.engine.direct.approvals(ref);
      assert.equal(pending?.tool, "w.write");
      harness.release(0);
      assert.equal(text(await read), "read");
      await t.engine.direct.decide(ref, pending.seq, "approved", { always: true });
      assert.equal(text(await write), "written");
      const later = await t.engine.direct.call(ref, { ...call("c", "w_write"), wait: 0 });
      assert.equal(text(later), "written", "approved always for this session");
    } finally {
      await t.cleanup();
    }
  });
});
