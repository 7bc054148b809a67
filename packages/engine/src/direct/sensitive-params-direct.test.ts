import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { ToolCallAnswer } from "@tapedeck/protocol/api";
import { Engine } from "../engine.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import { SqliteStore } from "../store/sqlite-store.js";
import { tempDir, testSandboxes } from "../test-support/engines.js";
import { findSecrets } from "../test-support/leak-scan.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";

after(() => testSandboxes().close());

/**
 * `sensitiveParams` in direct tool sessions: the model's call carries the value, the tool gets
 * it, the session's journal and its pending approval only a hash. A session has no script to
 * compute the value again, so a call approved after the engine restarted is not sent (it would
 * carry the hash): the model is told to make the call again.
 */

const SECRET = "hunter2-s3cret-Value";
const MARKER = /^\[redacted hmac-sha256:[0-9a-f]{32}\]$/;
const ref = { session: "conv", namespace: "dora" };

function setup() {
  const dir = tempDir();
  const harness = new ToolHarness({ "w.login": () => "logged in" });
  const open = () =>
    Engine.open({
      store: SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "normal" }),
      sandboxes: { create: (options) => testSandboxes().create(options), close: () => Promise.resolve() },
      sources: { host: new InProcessHostTools(harness.module()) },
      masterKeyFile: join(dir.path, "master.key"),
    });
  return { dir, harness, open };
}

async function asked(engine: Engine) {
  const { id } = await engine.registerToolset(harnessToolset(["w.login"], { policies: { "w.login": { sensitiveParams: ["/password"] } } }));
  const bound = await engine.direct.bind(ref, { toolset: id, approval: { ask: ["w.login"] } });
  const call = { binding: bound.binding, api: "generic", toolCallId: "toolu_1", name: "w_login", input: { user: "ada", password: SECRET } } as const;
  const answer = await engine.direct.call(ref, { ...call, wait: 0 });
  assert.equal(answer.status, "pending");
  const [pending] = await engine.direct.approvals(ref);
  assert.match((pending!.args as { password: string }).password, MARKER);
  return { call, seq: pending!.seq };
}

function text(answer: ToolCallAnswer): string {
  assert.equal(answer.status, "done", JSON.stringify(answer));
  return answer.status === "done" ? String((answer.result as { text: string }).text) : "";
}

void describe("direct sessions: sensitiveParams", () => {
  it("approved in the same process, the tool gets the real value; the journal and the approval hold its hash", async () => {
    const t = setup();
    const engine = await t.open();
    try {
      const { call, seq } = await asked(engine);
      await engine.direct.decide(ref, seq, "approved", {});
      assert.equal(text(await engine.direct.call(ref, { ...call, wait: 30 })), "logged in");
      assert.deepEqual(
        t.harness.calls.map((c) => c.args),
        [{ user: "ada", password: SECRET }],
      );
      assert.deepEqual(await findSecrets(engine, t.dir.path, [SECRET]), []);
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  it("approved after a restart, the call is not sent with the hash: the model is told to call again", async () => {
    const t = setup();
    const first = await t.open();
    let second: Engine | undefined;
    try {
      const { call, seq } = await asked(first);
      await first.close();
      second = await t.open();
      await second.direct.decide(ref, seq, "approved", {});
      const answer = await second.direct.call(ref, { ...call, wait: 30 });
      assert.equal(answer.status === "done" && answer.isError, true, JSON.stringify(answer));
      assert.match(JSON.stringify(answer), /sensitive parameter \/password is journaled only as a hash/);
      assert.equal(t.harness.calls.length, 0, "never sent");
      assert.deepEqual(await findSecrets(second, t.dir.path, [SECRET]), []);
    } finally {
      await first.close();
      await second?.close();
      t.dir.cleanup();
    }
  });
});
