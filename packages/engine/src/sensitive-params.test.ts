import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { JournalEntry, ToolsetSpec } from "@tapedeck/protocol";
import { Engine, type EngineEvent } from "./engine.js";
import { InProcessHostTools } from "./sources/in-process-host-tools.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { tempDir, testSandboxes } from "./test-support/engines.js";
import { findSecrets } from "./test-support/leak-scan.js";
import { STDIO_MAIN } from "./test-support/mcp/fixture-clients.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";

/**
 * `sensitiveParams` (issue 15): a tool's policy names JSON pointers into its arguments whose
 * values the tool receives as they are, while the journal, events, approvals, the cassette and
 * the database keep only a keyed hash — which replay and forks still compare.
 */

after(() => testSandboxes().close());

/** Written so that the secret is nowhere in the script's source (which the run record keeps): the script joins it. */
const SECRET = "hunter2-s3cret-Value";
const JOINED = `["hunter2", "s3cret", "Value"].join("-")`;
const OTHER = "swordfish-0ther-Value";
const MARKER = /^\[redacted hmac-sha256:[0-9a-f]{32}\]$/;

function setup(policies: ToolsetSpec["policies"] = {}) {
  const dir = tempDir();
  const harness = new ToolHarness({ "w.login": () => ({ ok: true }) });
  const events: EngineEvent[] = [];
  const open = async () => {
    const engine = await Engine.open({
      store: SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "normal" }),
      sandboxes: { create: (options) => testSandboxes().create(options), close: () => Promise.resolve() },
      sources: { host: new InProcessHostTools(harness.module()) },
      masterKeyFile: join(dir.path, "master.key"),
    });
    engine.on((event) => events.push(event));
    return engine;
  };
  const spec: ToolsetSpec = {
    ...harnessToolset(["w.login"]),
    mcpServers: { fx: { command: process.execPath, args: [STDIO_MAIN] } },
    policies: { "w.login": { sensitiveParams: ["/password"] }, "fx.echo": { sensitiveParams: ["/text"] }, ...policies },
  };
  return { dir, harness, events, open, spec };
}

function scheduledArgs(journal: readonly JournalEntry[], tool: string): unknown[] {
  return journal.flatMap((e) => (e.kind === "call.scheduled" && e.tool === tool ? [e.args] : []));
}

void describe("sensitiveParams", () => {
  void it("a host tool and an MCP tool receive the real value; the journal, events, cassette and database hold only its hash", async () => {
    const t = setup();
    const engine = await t.open();
    try {
      const { id } = await engine.registerToolset(t.spec);
      const source = `import { w, fx } from "tapedeck:tools";
export default async () => {
  const password = ${JOINED};
  const login = await w.login({ user: "ada", password });
  const echoed = await fx.echo({ text: password });
  return { login, echoed };
};`;
      const started = await engine.start({ toolset: id, source });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      const end = await started.end;
      // The MCP tool echoes what it got: the real value (the leak scan knows it, and redacts the echo).
      assert.deepEqual(end, { status: "completed", output: { login: { ok: true }, echoed: { text: "[redacted: secret argument /text]" } } });
      assert.deepEqual(
        t.harness.calls.map((c) => c.args),
        [{ user: "ada", password: SECRET }],
      );
      const journal = await engine.journal(started.runId);
      const [login] = scheduledArgs(journal, "w.login") as [{ user: string; password: string }];
      assert.equal(login.user, "ada", "only the sensitive pointer is redacted");
      assert.match(login.password, MARKER);
      const [echo] = scheduledArgs(journal, "fx.echo") as [{ text: string }];
      assert.equal(echo.text, login.password, "the same value gives the same hash, whatever the tool");
      const cassette = await engine.cassette(started.runId);
      const found = await findSecrets(engine, t.dir.path, [SECRET], { events: JSON.stringify(t.events), cassette: JSON.stringify(cassette) });
      assert.deepEqual(found, []);
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  void it("a call waiting for approval shows the hash; approved after a restart, the tool receives the real value from the re-run script", async () => {
    const t = setup({ "w.login": { approval: true, sensitiveParams: ["/password"] } });
    const engine = await t.open();
    let reopened: Engine | undefined;
    try {
      const { id } = await engine.registerToolset(t.spec);
      const started = await engine.start({
        toolset: id,
        source: `import { w } from "tapedeck:tools";\nexport default async () => w.login({ user: "ada", password: ${JOINED} });`,
      });
      if (started.kind !== "started") throw new Error("refused");
      while ((await engine.pendingDecisions()).length === 0) await engine.settled(started.runId);
      const [pending] = await engine.pendingDecisions();
      assert.match((pending!.args as { password: string }).password, MARKER);
      await engine.close();
      reopened = await t.open();
      assert.match(((await reopened.pendingDecisions())[0]!.args as { password: string }).password, MARKER);
      await reopened.approve(started.runId, 1);
      assert.deepEqual(await reopened.end(started.runId), { status: "completed", output: { ok: true } });
      assert.deepEqual(
        t.harness.calls.map((c) => c.args),
        [{ user: "ada", password: SECRET }],
      );
      assert.deepEqual(await findSecrets(reopened, t.dir.path, [SECRET], { events: JSON.stringify(t.events) }), []);
    } finally {
      await engine.close();
      await reopened?.close();
      t.dir.cleanup();
    }
  });

  void it("replay compares the hashes: the recorded value replays cleanly, another one diverges, and the message shows no value", async () => {
    const t = setup();
    const engine = await t.open();
    try {
      const { id } = await engine.registerToolset(t.spec);
      const started = await engine.start({
        toolset: id,
        source: `import { w } from "tapedeck:tools";\nexport default async () => w.login({ user: "ada", password: ${JOINED} });`,
      });
      if (started.kind !== "started") throw new Error("refused");
      await started.end;
      assert.deepEqual(await engine.verify(started.runId), { ok: true, end: { status: "completed", output: { ok: true } } });
      // The journal as a run with another password would have written it: the hash of `OTHER`.
      const other = await engine.start({
        toolset: id,
        source: `import { w } from "tapedeck:tools";\nexport default async () => w.login({ user: "ada", password: ${JSON.stringify(OTHER)} });`,
      });
      if (other.kind !== "started") throw new Error("refused");
      await other.end;
      const [otherArgs] = scheduledArgs(await engine.journal(other.runId), "w.login");
      const db = new Database(join(t.dir.path, "tapedeck.db"));
      try {
        const row = db.prepare("SELECT idx, body FROM journal WHERE run_id = ? AND kind = 'call.scheduled'").get(started.runId) as {
          idx: number;
          body: string;
        };
        const body = JSON.parse(row.body) as { args: unknown };
        db.prepare("UPDATE journal SET body = ? WHERE run_id = ? AND idx = ?").run(JSON.stringify({ ...body, args: otherArgs }), started.runId, row.idx);
      } finally {
        db.close();
      }
      const verified = await engine.verify(started.runId);
      assert.equal(verified.ok, false);
      if (verified.ok) return;
      assert.match(verified.problem, /Replay diverged at call #1/);
      assert.ok(!verified.problem.includes(SECRET) && !verified.problem.includes(OTHER), verified.problem);
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  void it("a fork reuses its parent's call when the sensitive value is the same, and sends it when it changed", async () => {
    const t = setup();
    const engine = await t.open();
    try {
      const { id } = await engine.registerToolset(t.spec);
      const script = (password: string) => `import { w } from "tapedeck:tools";\nexport default async () => w.login({ user: "ada", password: ${password} });`;
      const parent = await engine.start({ toolset: id, source: script(JOINED) });
      if (parent.kind !== "started") throw new Error("refused");
      await parent.end;
      const same = await engine.fork({ parent: parent.runId, source: `${script(JOINED)}\n// the same call` });
      if (same.kind !== "started") throw new Error("refused");
      assert.deepEqual(await same.end, { status: "completed", output: { ok: true } });
      assert.equal(t.harness.calls.length, 1, "reused from the parent: not sent again");
      assert.match((scheduledArgs(await engine.journal(same.runId), "w.login")[0] as { password: string }).password, MARKER);
      const changed = await engine.fork({ parent: parent.runId, source: script(JSON.stringify(OTHER)) });
      if (changed.kind !== "started") throw new Error("refused");
      assert.deepEqual(await changed.end, { status: "completed", output: { ok: true } });
      assert.deepEqual(
        t.harness.calls.map((c) => (c.args as { password: string }).password),
        [SECRET, OTHER],
      );
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  void it("a user tool's invocation of a tool with sensitiveParams is journaled (call.sub) with the hash, and the tool gets the value", async () => {
    const t = setup({ "fx.effects": { sensitiveParams: ["/op"] } });
    const engine = await t.open();
    try {
      const { id } = await engine.registerToolset({
        ...t.spec,
        userTools: {
          probe: {
            run: {
              description: "Performs an effect whose name is secret.",
              code: `import { fx } from "tapedeck:tools";
                export default async () => {
                  const done = await fx.effects({ op: ${JOINED} });
                  return { count: done.count };
                };`,
              outputSchema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
              grants: { tools: ["fx.effects"] },
            },
          },
        },
      });
      const started = await engine.start({ toolset: id, source: `import { probe } from "tapedeck:tools";\nexport default async () => probe.run({});` });
      if (started.kind !== "started") throw new Error("refused");
      assert.deepEqual(await started.end, { status: "completed", output: { count: 1 } });
      const journal = await engine.journal(started.runId);
      const sub = journal.find((e) => e.kind === "call.sub" && e.tool === "fx.effects");
      assert.match((sub as { args: { op: string } } | undefined)?.args.op ?? "", MARKER);
      assert.deepEqual(await findSecrets(engine, t.dir.path, [SECRET]), []);
      // What the MCP server was sent, read back (this run journals it in clear: it is not a sensitive argument there).
      const log = await engine.start({
        toolset: id,
        source: `import { fx } from "tapedeck:tools";\nexport default async () => (await fx.effects_log({})).keys.map((k) => k.op);`,
      });
      if (log.kind !== "started") throw new Error("refused");
      assert.deepEqual(await log.end, { status: "completed", output: [SECRET] });
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  void it("a user tool's call.sub entries hold markers, never values: an invoked tool echoing its sensitive argument, and the tool's own sensitive input passed on", async () => {
    const t = setup({ "probe.run": { sensitiveParams: ["/password"] } });
    const engine = await t.open();
    try {
      const { id } = await engine.registerToolset({
        ...t.spec,
        userTools: {
          probe: {
            run: {
              description: "Echoes a token it makes through a tool whose argument is sensitive, and passes its password on to one whose argument is not.",
              code: `import { fx } from "tapedeck:tools";
                export default async (input: { password: string }) => {
                  const token = ["sw0rd", "fish", "Token"].join("-");
                  const echoed = await fx.echo({ text: token });
                  const done = await fx.effects({ op: input.password });
                  console.log("sent " + input.password);
                  return { echoed: echoed.text, count: done.count };
                };`,
              inputSchema: { type: "object", properties: { password: { type: "string" } }, required: ["password"] },
              outputSchema: { type: "object", properties: { echoed: { type: "string" }, count: { type: "number" } }, required: ["echoed", "count"] },
              grants: { tools: ["fx.echo", "fx.effects"] },
            },
          },
        },
      });
      const started = await engine.start({
        toolset: id,
        source: `import { probe } from "tapedeck:tools";\nexport default async () => probe.run({ password: ${JOINED} });`,
      });
      if (started.kind !== "started") throw new Error("refused");
      // The tool sees the echo redacted, as a script does: what it sees is what a replay gets from the journal.
      assert.deepEqual(await started.end, { status: "completed", output: { echoed: "[redacted: secret argument /text]", count: 1 } });
      const journal = await engine.journal(started.runId);
      const subs = journal.flatMap((e) => (e.kind === "call.sub" ? [e] : []));
      assert.deepEqual(
        subs.map((e) => e.tool),
        ["fx.echo", "fx.effects"],
      );
      assert.deepEqual(subs[0]?.answer.ok === true ? subs[0].answer.value : undefined, { text: "[redacted: secret argument /text]" });
      assert.deepEqual(subs[1]?.args, { op: "[redacted: secret argument /password]" });
      assert.deepEqual(await findSecrets(engine, t.dir.path, [SECRET, "sw0rd-fish-Token"], { events: JSON.stringify(t.events) }), []);
      assert.deepEqual(await engine.verify(started.runId), { ok: true, end: await started.end });
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  void it("live arguments that hold a redaction marker at a sensitive pointer are refused, naming the pointer", async () => {
    const t = setup();
    const engine = await t.open();
    try {
      const { id } = await engine.registerToolset(t.spec);
      const started = await engine.start({
        toolset: id,
        source: `import { w, ToolError } from "tapedeck:tools";
export default async () => { try { return await w.login({ password: "[redacted hmac-sha256:00000000000000000000000000000000]" }); } catch (e) { return (e as ToolError).message; } };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      const end = await started.end;
      assert.equal(end.status, "completed");
      assert.match(JSON.stringify(end.status === "completed" ? end.output : null), /\/password is a sensitive parameter and holds a redaction marker/);
      assert.equal(t.harness.calls.length, 0);
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });

  void it("the pointers are part of the toolset id, and malformed ones are refused naming the field", async () => {
    const t = setup();
    const engine = await t.open();
    try {
      const base = harnessToolset(["w.login"]);
      const plain = await engine.registerToolset(base);
      const one = await engine.registerToolset({ ...base, policies: { "w.login": { sensitiveParams: ["/password"] } } });
      const two = await engine.registerToolset({ ...base, policies: { "w.login": { sensitiveParams: ["/password", "/card/number"] } } });
      const reordered = await engine.registerToolset({ ...base, policies: { "w.login": { sensitiveParams: ["/card/number", "/password"] } } });
      assert.equal(new Set([plain.id, one.id, two.id]).size, 3);
      assert.equal(reordered.id, two.id, "a set: the order it is written in does not matter");
      const pinned = (await engine.toolset(two.id)).toolset;
      assert.deepEqual(pinned.tools.find((tool) => tool.name === "login")?.policy.sensitiveParams, ["/card/number", "/password"]);
      await assert.rejects(engine.registerToolset({ ...base, policies: { "w.login": { sensitiveParams: ["password"] } } }), (error: Error) => {
        assert.match(error.message, /policies\["w.login"\]\.sensitiveParams\[0\]: the JSON pointer "password" must start with "\/"/);
        return true;
      });
      await assert.rejects(
        engine.registerToolset({ ...base, policies: { "w.login": { sensitiveParams: "/password" } } as never }),
        /sensitiveParams must be a list of JSON pointers/,
      );
      await assert.rejects(
        engine.registerToolset({ ...base, policies: { "w.login": { sensitiveParams: [""] } } }),
        /sensitiveParams\[0\]: "" would redact all the arguments/,
      );
    } finally {
      await engine.close();
      t.dir.cleanup();
    }
  });
});
