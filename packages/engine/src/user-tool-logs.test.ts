import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { JournalEntry, RunEnd, ToolLogLine, ToolsetSpec, UserToolFileSpec } from "@tapedeck/protocol";
import type { Engine } from "./engine.js";
import { findSecrets } from "./test-support/leak-scan.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";

/**
 * A user tool's `console.*` lines through the Engine API: bounded and leak-scanned (the call's
 * sensitive argument values too), they are journaled on the entry that records the call's
 * outcome (`logs`), never as the script's `log` entries, and a replay ignores them.
 */

after(() => testSandboxes().close());

/** Key-shaped: the shape scanner knows it without being told. The tool joins it at run time (a toolset holding it is refused). */
const SECRET_BODY = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const SECRET = `ghp_${SECRET_BODY}`;
/** Not key-shaped: only the call's `sensitiveParams` says it is a secret. The script joins it (its source is stored as written). */
const PASSWORD = "correct-horse-battery-staple";
const JOINED_PASSWORD = `["correct-horse", "battery-staple"].join("-")`;

function tools(specs: Record<string, Pick<UserToolFileSpec, "code" | "inputSchema" | "outputSchema">>): ToolsetSpec {
  const userTools: Record<string, UserToolFileSpec> = {};
  for (const [name, spec] of Object.entries(specs)) userTools[name] = { description: `The ${name} tool.`, grants: {}, ...spec };
  return { userTools: { chat: userTools }, policies: { "chat.talk": { sensitiveParams: ["/password"] } } };
}

const TOOLS = tools({
  talk: {
    code: `export default async (input: { item: number; password: string }) => {
      console.log("looking up item", input.item);
      console.warn("using key " + ["ghp", "${SECRET_BODY}"].join("_"));
      console.info("signing in with " + input.password);
      return { found: input.item };
    };`,
    inputSchema: { type: "object", properties: { item: { type: "number" }, password: { type: "string" } }, required: ["item", "password"] },
    outputSchema: { type: "object", properties: { found: { type: "number" } }, required: ["found"] },
  },
  flood: {
    code: `export default async () => {
      for (let i = 0; i < 1005; i++) console.log("line " + i);
      return { done: true };
    };`,
    outputSchema: { type: "object", properties: { done: { type: "boolean" } }, required: ["done"] },
  },
  broken: {
    code: `export default async () => {
      console.error("about to fail");
      throw new Error("the tool broke");
    };`,
  },
});

async function run(engine: Engine, source: string): Promise<{ runId: string; end: RunEnd }> {
  const { id } = await engine.registerToolset(TOOLS);
  const started = await engine.start({ toolset: id, source });
  if (started.kind === "refused") throw new Error(`refused:\n${started.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n")}`);
  return { runId: started.runId, end: await started.end };
}

/** The logs on the outcome entry of call `seq`. */
function toolLogs(journal: readonly JournalEntry[], seq: number): readonly ToolLogLine[] | undefined {
  const entry = journal.find((e) => (e.kind === "call.completed" || e.kind === "call.failed") && e.seq === seq);
  assert.ok(entry !== undefined && (entry.kind === "call.completed" || entry.kind === "call.failed"), `call ${seq} has an outcome entry`);
  return entry.logs;
}

const scriptLogs = (journal: readonly JournalEntry[]) => journal.flatMap((e) => (e.kind === "log" ? [`${e.level} ${e.message}`] : []));

describe("a user tool's logs", () => {
  it("are journaled on the call's outcome entry, secrets and sensitive values redacted, apart from the script's own lines; a replay is clean", async () => {
    const t = await testEngine();
    // The key that hashes sensitive values in the journal, kept across the restart.
    const key = { masterKeyFile: join(t.dataDir, "master.key") };
    const first = await t.reopen(key);
    try {
      const { runId, end } = await run(
        first,
        `import { chat } from "tapedeck:tools";
         export default async () => {
           console.log("script before");
           const { found } = await chat.talk({ item: 7, password: ${JOINED_PASSWORD} });
           console.log("script after", found);
           return found;
         };`,
      );
      assert.deepEqual(end, { status: "completed", output: 7 });
      const journal = await first.journal(runId);
      const logs = toolLogs(journal, 1);
      assert.ok(logs !== undefined, "the outcome entry carries the tool's logs");
      assert.deepEqual(
        logs.map((line) => line.level),
        ["log", "warn", "info"],
      );
      assert.equal(logs[0]!.message, "looking up item 7");
      assert.equal(logs[1]!.message, "using key [redacted: github token]");
      assert.match(logs[2]!.message, /^signing in with \[redacted: [^\]]+\]$/);
      assert.deepEqual(scriptLogs(journal), ["log script before", "log script after 7"], "the script's log entries are its own lines only");
      assert.deepEqual(await findSecrets(first, t.dataDir, [SECRET, PASSWORD]), []);
      assert.deepEqual(await first.verify(runId), { ok: true, end });
      await first.close();
      const engine = await t.reopen(key);
      try {
        assert.deepEqual(await engine.verify(runId), { ok: true, end }, "the reopened engine replays the journal with its logs");
        assert.deepEqual(await engine.journal(runId), journal);
      } finally {
        await engine.close();
      }
    } finally {
      await first.close();
      await t.cleanup();
    }
  });

  it("keep at most 1,000 lines of a call, then one saying how many were dropped", async () => {
    const t = await testEngine();
    try {
      const { runId, end } = await run(t.engine, `import { chat } from "tapedeck:tools";\nexport default async () => (await chat.flood({})).done;`);
      assert.deepEqual(end, { status: "completed", output: true });
      const journal = await t.engine.journal(runId);
      const logs = toolLogs(journal, 1) ?? [];
      assert.equal(logs.length, 1001);
      assert.deepEqual(
        logs.slice(0, 1000).map((line) => line.message),
        Array.from({ length: 1000 }, (_, i) => `line ${i}`),
      );
      assert.deepEqual(logs[1000], { level: "warn", message: "[5 more lines were dropped: a user tool call keeps at most 1000]" });
      assert.deepEqual(scriptLogs(journal), []);
      assert.deepEqual(await t.engine.verify(runId), { ok: true, end });
    } finally {
      await t.cleanup();
    }
  });

  it("of a call that fails are journaled on its call.failed entry", async () => {
    const t = await testEngine();
    try {
      const { runId, end } = await run(
        t.engine,
        `import { chat } from "tapedeck:tools";
         export default async () => { try { await chat.broken({}); return "no"; } catch (e) { return (e as Error).message.includes("the tool broke"); } };`,
      );
      assert.deepEqual(end, { status: "completed", output: true });
      const journal = await t.engine.journal(runId);
      assert.ok(journal.some((e) => e.kind === "call.failed" && e.seq === 1));
      assert.deepEqual(toolLogs(journal, 1), [{ level: "error", message: "about to fail" }]);
      assert.deepEqual(await t.engine.verify(runId), { ok: true, end });
    } finally {
      await t.cleanup();
    }
  });
});
