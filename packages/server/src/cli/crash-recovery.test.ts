import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collect, killHard, stderrLine, withCliTest } from "./test-support/child-cli.js";

/**
 * Crash recovery for real: `tapedeck run` in a child process is killed with SIGKILL while a
 * call is in flight; `tapedeck resume` in a new process finishes the run. The host tool writes
 * every attempt it receives to a file, so the test sees exactly what was sent.
 */
const HOST_MODULE = `
import { appendFileSync } from "node:fs";
export const ledger = {
  read: async () => ({ balance: 100 }),
  transfer: async (args: { cents: number }, ctx: { idempotencyKey: string; attempt: number }) => {
    appendFileSync(process.env.EFFECTS_FILE!, JSON.stringify({ key: ctx.idempotencyKey, attempt: ctx.attempt }) + "\\n");
    if (process.env.HANG_ON_TRANSFER === "1") {
      process.stderr.write("TRANSFER SENT\\n");
      return new Promise(() => {});
    }
    return { ok: true, cents: args.cents };
  },
};`;

const SCRIPT = `import { ledger, ToolError } from "tapedeck:tools";
export default async function () {
  const before = await ledger.read();
  try {
    const done = await ledger.transfer({ cents: 25 });
    return { before, done };
  } catch (e) {
    return { before, failed: (e as ToolError).code };
  }
}`;

function toolset(policy: string) {
  const open = { type: "object" };
  return JSON.stringify({
    hostTools: { ledger: { read: { description: "Balance.", inputSchema: open }, transfer: { description: "Move money.", inputSchema: open } } },
    policies: { "ledger.transfer": { onInterruption: policy } },
  });
}

function crashThenResume(policy: "retry" | "at_most_once") {
  return withCliTest("tapedeck-crash-", async ({ dir, spawn }) => {
    writeFileSync(join(dir, "toolset.json"), toolset(policy));
    writeFileSync(join(dir, "tools.ts"), HOST_MODULE);
    writeFileSync(join(dir, "script.ts"), SCRIPT);
    const effects = join(dir, "effects.jsonl");
    const data = join(dir, "data");
    const common = ["--data", data, "--host", join(dir, "tools.ts")];

    const first = spawn(["run", join(dir, "script.ts"), "--toolset", join(dir, "toolset.json"), ...common], { EFFECTS_FILE: effects, HANG_ON_TRANSFER: "1" });
    await stderrLine(first, /^TRANSFER SENT$/);
    assert.equal(await killHard(first), "SIGKILL");

    const resumed = await collect(spawn(["resume", ...common], { EFFECTS_FILE: effects }));
    const sent = readFileSync(effects, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { key: string; attempt: number });
    return { resumed, sent };
  });
}

describe("crash recovery through the CLI (SIGKILL)", () => {
  it("retry: the interrupted call is sent again with the same key, and the run completes", async () => {
    const { resumed, sent } = await crashThenResume("retry");
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(JSON.parse(resumed.stdout), { before: { balance: 100 }, done: { ok: true, cents: 25 } });
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.key, sent[1]!.key);
    assert.match(sent[0]!.key, /^run_[0-9a-z]+\/2$/);
    assert.deepEqual(
      sent.map((s) => s.attempt),
      [1, 2],
    );
  });

  it("at_most_once: the interrupted call is not sent again; the script gets outcomeUnknown", async () => {
    const { resumed, sent } = await crashThenResume("at_most_once");
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(JSON.parse(resumed.stdout), { before: { balance: 100 }, failed: "outcomeUnknown" });
    assert.equal(sent.length, 1);
  });
});
