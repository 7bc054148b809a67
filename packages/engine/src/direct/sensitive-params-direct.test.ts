import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import type { ToolCallAnswer } from "@tapedeck/protocol/api";
import { VirtualClock } from "../clock.js";
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
 * compute the value again, so the call's live arguments are kept sealed (AES-GCM, bound to the
 * session and the call's seq) in the session's blobs until the call has its outcome: a call
 * approved after a restart, or after the session was evicted from memory, is sent with the real
 * value; a sealed copy that was altered or moved to another call does not open, and the call is
 * refused, never sent with the hash.
 */

const SECRET = "hunter2-s3cret-Value";
const OTHER = "other-s3cret-Value-42";
const MARKER = /^\[redacted hmac-sha256:[0-9a-f]{32}\]$/;
const ref = { session: "conv", namespace: "dora" };

function setup(options: { clock?: VirtualClock; directSessions?: { idleMs: number } } = {}) {
  const dir = tempDir();
  const harness = new ToolHarness({ "w.login": () => "logged in" });
  const path = join(dir.path, "tapedeck.db");
  const open = () =>
    Engine.open({
      store: SqliteStore.open({ path, durability: "normal" }),
      sandboxes: { create: (o) => testSandboxes().create(o), close: () => Promise.resolve() },
      sources: { host: new InProcessHostTools(harness.module()) },
      masterKeyFile: join(dir.path, "master.key"),
      ...options,
    });
  /** The handles of the sealed call arguments in the database (read with the engine closed). */
  const sealedRows = () =>
    withDb(path, (db) =>
      db.prepare<[], { handle: string; text: string }>("SELECT handle, text FROM direct_blobs WHERE handle LIKE 'sealed%' ORDER BY handle").all(),
    );
  return { dir, harness, open, path, sealedRows };
}

function withDb<T>(path: string, use: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

async function asked(engine: Engine, toolCallId = "toolu_1", password = SECRET) {
  const { id } = await engine.registerToolset(harnessToolset(["w.login"], { policies: { "w.login": { sensitiveParams: ["/password"] } } }));
  const bound = await engine.direct.bind(ref, { toolset: id, approval: { ask: ["w.login"] } });
  const call = { binding: bound.binding, api: "generic", toolCallId, name: "w_login", input: { user: "ada", password } } as const;
  const answer = await engine.direct.call(ref, { ...call, wait: 0 });
  assert.equal(answer.status, "pending");
  const pending = (await engine.direct.approvals(ref)).find((p) => p.seq === (answer.status === "pending" ? answer.approval.seq : -1));
  assert.match((pending!.args as { password: string }).password, MARKER);
  return { call, seq: pending!.seq, toolset: id };
}

function text(answer: ToolCallAnswer): string {
  assert.equal(answer.status, "done", JSON.stringify(answer));
  return answer.status === "done" ? String((answer.result as { text: string }).text) : "";
}

function refused(answer: ToolCallAnswer, why: RegExp): void {
  assert.equal(answer.status === "done" && answer.isError, true, JSON.stringify(answer));
  assert.match(JSON.stringify(answer), /was not sent: the value of its sensitive parameter \/password is journaled only as a hash/);
  assert.match(JSON.stringify(answer), why);
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
    }
    assert.deepEqual(t.sealedRows(), [], "the sealed copy is deleted once the call has its outcome");
    t.dir.cleanup();
  });

  it("approved after a restart, the call is sent with the real value, opened from its sealed copy, which is then deleted; the value is written nowhere", async () => {
    const t = setup();
    const first = await t.open();
    let second: Engine | undefined;
    try {
      const { call, seq } = await asked(first);
      await first.close();
      assert.deepEqual(
        t.sealedRows().map((r) => r.handle),
        [`sealed_args_${seq}`],
        "kept sealed while it waits",
      );
      second = await t.open();
      // The sealed copy is one of the session's blobs, but not one the blob API (or fetch_blob) reads.
      await assert.rejects(second.direct.blob(ref, `sealed_args_${seq}`, 0), { code: "not_found" });
      await second.direct.decide(ref, seq, "approved", {});
      assert.equal(text(await second.direct.call(ref, { ...call, wait: 30 })), "logged in");
      assert.deepEqual(
        t.harness.calls.map((c) => c.args),
        [{ user: "ada", password: SECRET }],
      );
      assert.deepEqual(await findSecrets(second, t.dir.path, [SECRET]), []);
      await second.close();
      assert.deepEqual(t.sealedRows(), [], "deleted once sent and answered");
      // And after the close's checkpoint, in the database file itself.
      second = await t.open();
      assert.deepEqual(await findSecrets(second, t.dir.path, [SECRET]), []);
    } finally {
      await first.close();
      await second?.close();
      t.dir.cleanup();
    }
  });

  it("rejected after a restart, the call's sealed copy is deleted and nothing is sent", async () => {
    const t = setup();
    const first = await t.open();
    let second: Engine | undefined;
    try {
      const { call, seq } = await asked(first);
      await first.close();
      assert.equal(t.sealedRows().length, 1);
      second = await t.open();
      await second.direct.decide(ref, seq, "rejected", { reason: "not now" });
      const answer = await second.direct.call(ref, { ...call, wait: 30 });
      assert.equal(answer.status === "done" && answer.isError, true, JSON.stringify(answer));
      assert.equal(t.harness.calls.length, 0, "never sent");
      await second.close();
      assert.deepEqual(t.sealedRows(), []);
    } finally {
      await first.close();
      await second?.close();
      t.dir.cleanup();
    }
  });

  it("a session evicted from memory while its call waits sends the real value once approved", async () => {
    const MINUTE = 60_000;
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const t = setup({ clock, directSessions: { idleMs: 10 * MINUTE } });
    const engine = await t.open();
    try {
      const { call, seq, toolset } = await asked(engine);
      clock.setTimer(clock.now() + 11 * MINUTE, () => {});
      assert.equal(await clock.virtual.advance(), true);
      await engine.direct.bind({ session: "other", namespace: "dora" }, { toolset });
      assert.equal(engine.direct.openSessions, 1, "the waiting session was evicted");
      await engine.direct.decide(ref, seq, "approved", {});
      assert.equal(text(await engine.direct.call(ref, { ...call, wait: 30 })), "logged in");
      assert.deepEqual(
        t.harness.calls.map((c) => c.args),
        [{ user: "ada", password: SECRET }],
      );
      assert.deepEqual(await findSecrets(engine, t.dir.path, [SECRET]), []);
    } finally {
      await engine.close();
    }
    assert.deepEqual(t.sealedRows(), []);
    t.dir.cleanup();
  });

  it("a sealed copy altered, or moved to another call, does not open: the call is refused with why, never sent", async () => {
    const t = setup();
    const first = await t.open();
    let second: Engine | undefined;
    try {
      const a = await asked(first, "toolu_a", SECRET);
      const b = await asked(first, "toolu_b", OTHER);
      const c = await asked(first, "toolu_c", SECRET);
      await first.close();
      withDb(t.path, (db) => {
        const row = (seq: number) => db.prepare<[string], { text: string }>("SELECT text FROM direct_blobs WHERE handle = ?").get(`sealed_args_${seq}`)!.text;
        const put = db.prepare<[string, string]>("UPDATE direct_blobs SET text = ? WHERE handle = ?");
        // b's copy goes where a's was: bound to another seq, it must not open as a's.
        put.run(row(b.seq), `sealed_args_${a.seq}`);
        // c's ciphertext has one character changed.
        const sealed = JSON.parse(JSON.parse(row(c.seq)) as string) as { iv: string; sealed: string };
        const flipped = (sealed.sealed[0] === "A" ? "B" : "A") + sealed.sealed.slice(1);
        put.run(JSON.stringify(JSON.stringify({ ...sealed, sealed: flipped })), `sealed_args_${c.seq}`);
      });
      second = await t.open();
      for (const { call, seq } of [a, c]) {
        await second.direct.decide(ref, seq, "approved", {});
        refused(
          await second.direct.call(ref, { ...call, wait: 30 }),
          /sealed while it waited, did not open \(the sealed copy was altered, belongs to another call/,
        );
      }
      assert.equal(t.harness.calls.length, 0, "neither sent, with the hash or with another call's value");
      // b's own copy is intact and goes with b.
      await second.direct.decide(ref, b.seq, "approved", {});
      assert.equal(text(await second.direct.call(ref, { ...b.call, wait: 30 })), "logged in");
      assert.deepEqual(
        t.harness.calls.map((x) => x.args),
        [{ user: "ada", password: OTHER }],
      );
      await second.close();
      assert.deepEqual(t.sealedRows(), [], "each call's copy is deleted at its outcome, refused ones included");
    } finally {
      await first.close();
      await second?.close();
      t.dir.cleanup();
    }
  });
});
