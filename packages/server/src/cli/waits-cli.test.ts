import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli } from "./cli.js";
import { collect, killHard, stderrLine, withCliTest, type CliTest } from "./test-support/child-cli.js";
import { capture } from "./test-support/in-process.js";

/**
 * Durable waits through the CLI, for real: `tapedeck run` waits in a child process, is killed
 * with SIGKILL while the run is parked, and another process (`signal`, `resume`, `approve`,
 * `reject`) carries it on. The host tool appends every call it receives to a file, so the test
 * sees exactly what was sent.
 */
const HOST_MODULE = `
import { appendFileSync } from "node:fs";
export const ledger = {
  read: async () => ({ balance: 100 }),
  transfer: async (args, ctx) => {
    appendFileSync(process.env.EFFECTS_FILE, JSON.stringify({ key: ctx.idempotencyKey, attempt: ctx.attempt }) + "\\n");
    return { ok: true, cents: args.cents };
  },
};`;

const SCRIPTS = {
  signal: `import { ledger } from "tapedeck:tools";
export default async () => {
  console.log("waiting for go");
  const go = await signal<{ n: number }>("go");
  return { go, read: await ledger.read({}) };
};`,
  sleep: `import { ledger } from "tapedeck:tools";
export default async () => {
  await sleep("3s");
  return ledger.read({});
};`,
  approval: `import { ledger, ToolError } from "tapedeck:tools";
export default async () => {
  const before = await ledger.read({});
  try {
    return { before, done: await ledger.transfer({ cents: 25 }) };
  } catch (e) {
    return { before, failed: (e as ToolError).code };
  }
};`,
};

const open = { type: "object" };
const TOOLSET = JSON.stringify({
  hostTools: { ledger: { read: { description: "Balance.", inputSchema: open }, transfer: { description: "Move money.", inputSchema: open } } },
  policies: { "ledger.transfer": { approval: true } },
});

/** A folder with the toolset, the host module and the scripts; `tapedeck` in a child process or in this one. */
function withFixture(fn: (t: ReturnType<typeof fixture>) => Promise<void>): Promise<void> {
  return withCliTest("tapedeck-waits-", (t) => fn(fixture(t)));
}

function fixture({ dir, spawn }: CliTest) {
  writeFileSync(join(dir, "toolset.json"), TOOLSET);
  writeFileSync(join(dir, "tools.mjs"), HOST_MODULE);
  for (const [name, source] of Object.entries(SCRIPTS)) writeFileSync(join(dir, `${name}.ts`), source);
  const effects = join(dir, "effects.jsonl");
  const common = ["--data", join(dir, "data"), "--host", join(dir, "tools.mjs")];
  const env = { EFFECTS_FILE: effects };
  return {
    dir,
    /** `tapedeck <command> … --data … --host …` in a child process. */
    spawn: (args: readonly string[]) => spawn([...args, ...common], env),
    /** `tapedeck run <script>` in a child process. */
    run: (script: keyof typeof SCRIPTS, ...flags: string[]) =>
      spawn(["run", join(dir, `${script}.ts`), "--toolset", join(dir, "toolset.json"), ...flags, ...common], env),
    /** A command in this process, for those that execute no run (inspecting, or refused). */
    inspect: async (args: readonly string[]) => {
      const io = capture();
      const code = await cli([...args, "--data", join(dir, "data")], io);
      return { code, stdout: io.out.join("\n"), stderr: io.err.join("\n") };
    },
    sent: () =>
      existsSync(effects)
        ? readFileSync(effects, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as { key: string; attempt: number })
        : [],
  };
}

// Side by side: each test mostly waits for its children (the sleep test for its timer).
describe("durable waits through the CLI (SIGKILL while waiting)", { concurrency: true }, () => {
  it("signal: a run killed while it waits for a signal is woken by `tapedeck signal` in a new process, which prints its output", async () => {
    await withFixture(async (t) => {
      const first = t.run("signal");
      const {
        line,
        match: [, runId],
      } = await stderrLine(first, /^run (run_\w+) waiting: signal "go"/);
      assert.ok(line.includes(`→ tapedeck signal ${runId} go --payload '<json>' --data `), line);
      assert.match(line, /This process keeps the run: signals and decisions sent from another process reach it here$/);
      assert.equal(await killHard(first), "SIGKILL");

      const shown = await t.inspect(["show", runId!]);
      assert.match(shown.stdout, /^status {3}waiting$/m);
      assert.match(shown.stdout, /^waits {4}signal "go"$/m);
      assert.match((await t.inspect(["runs", "--status", "waiting"])).stdout, new RegExp(`^${runId}  waiting .* signal "go"$`));

      const signalled = await collect(t.spawn(["signal", runId!, "go", "--payload", '{"n":1}']));
      assert.equal(signalled.code, 0, signalled.stderr);
      assert.deepEqual(JSON.parse(signalled.stdout), { go: { n: 1 }, read: { balance: 100 } });
      assert.match(signalled.stderr, /^signal "go" sent to run run_\w+$/m);
      assert.doesNotMatch(signalled.stderr, /waiting for go/, "log lines printed before the signal are not printed again");
      const journal = (await t.inspect(["show", runId!])).stdout;
      assert.equal(journal.match(/call\.scheduled #\d+ tapedeck\.signal/g)?.length, 1, journal);
      assert.match(journal, /call\.completed #1 → \{"n":1\}/);

      const again = await t.inspect(["signal", runId!, "go"]);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /has ended \(completed\); the signal "go" was not sent/);
    });
  });

  it("kept: a run kept by `tapedeck run` takes a signal and a decision sent from other processes, and ends in its own process", async () => {
    await withFixture(async (t) => {
      const first = t.run("signal");
      const {
        match: [, runId],
      } = await stderrLine(first, /^run (run_\w+) waiting: signal "go"/);
      const signalled = await collect(t.spawn(["signal", runId!, "go", "--payload", '{"n":2}']));
      assert.equal(signalled.code, 0, signalled.stderr);
      assert.match(signalled.stderr, /is kept by another process \(.+\), which takes the signal and goes on there$/m);
      assert.equal(signalled.stdout, "", "the output is printed by the process that keeps the run");
      const done = await collect(first);
      assert.equal(done.code, 0, done.stderr);
      assert.deepEqual(JSON.parse(done.stdout), { go: { n: 2 }, read: { balance: 100 } });

      const second = t.run("approval");
      const {
        match: [, approvalRun],
      } = await stderrLine(second, /^run (run_\w+) waiting: approval of #2/);
      const approved = await collect(t.spawn(["approve", `${approvalRun}/2`]));
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stderr, /which journals the decision and goes on there$/m);
      const ended = await collect(second);
      assert.equal(ended.code, 0, ended.stderr);
      assert.deepEqual(JSON.parse(ended.stdout), { before: { balance: 100 }, done: { ok: true, cents: 25 } });
      assert.deepEqual(t.sent(), [{ key: `${approvalRun}/2`, attempt: 1 }]);
    });
  });

  it("sleep: a run killed while it sleeps past the hold is finished by `tapedeck resume <id>`, which waits for its timer", async () => {
    await withFixture(async (t) => {
      const first = t.run("sleep");
      const {
        line,
        match: [, runId],
      } = await stderrLine(first, /^run (run_\w+) waiting: sleep until \S+Z/);
      assert.match(line, /\(this process wakes it then\)$/);
      assert.equal(await killHard(first), "SIGKILL");

      const resumed = await collect(t.spawn(["resume", runId!]));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(JSON.parse(resumed.stdout), { balance: 100 });
      assert.match((await t.inspect(["show", runId!])).stdout, /^status {3}completed$/m);
    });
  });

  it("approval: a call waiting for approval is listed, sent once when approved from a new process; a detached run's rejected call fails with approval_rejected", async () => {
    await withFixture(async (t) => {
      const first = t.run("approval");
      const {
        line,
        match: [, runId],
      } = await stderrLine(first, /^run (run_\w+) waiting: approval of #2 ledger\.transfer\(\{"cents":25\}\)/);
      assert.ok(line.includes(`→ tapedeck approve ${runId}/2 --data `), line);
      assert.equal(await killHard(first), "SIGKILL");
      assert.deepEqual(t.sent(), [], "not sent before it is approved");

      const listed = await t.inspect(["approvals"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout, `${runId}/2  ledger.transfer({"cents":25})  approval`);

      const approved = await collect(t.spawn(["approve", `${runId}/2`, "--reason", "checked"]));
      assert.equal(approved.code, 0, approved.stderr);
      assert.deepEqual(JSON.parse(approved.stdout), { before: { balance: 100 }, done: { ok: true, cents: 25 } });
      assert.deepEqual(t.sent(), [{ key: `${runId}/2`, attempt: 1 }]);
      assert.match((await t.inspect(["show", runId!])).stdout, /call\.decided {3}#2 approved: checked/);
      assert.equal((await t.inspect(["approvals"])).stderr, "no calls are waiting for a decision");

      const detached = await collect(t.run("approval", "--detach"));
      assert.equal(detached.code, 0, detached.stderr);
      const second = detached.stdout.trim();
      assert.match(second, /^run_\w+$/, "--detach prints the run's id");
      assert.match(
        detached.stderr,
        new RegExp(
          `^run ${second} waiting: approval of #2 ledger\\.transfer\\(\\{"cents":25\\}\\) → tapedeck approve ${second}/2 .*\\| tapedeck reject ${second}/2 --reason <text>`,
          "m",
        ),
      );
      assert.doesNotMatch(detached.stderr, /keeps the run/, "a detached run is not kept by the process");
      assert.match((await t.inspect(["show", second])).stdout, /^status {3}waiting$/m);

      const rejected = await collect(t.spawn(["reject", second, "2", "--reason", "not today"]));
      assert.equal(rejected.code, 0, rejected.stderr);
      assert.deepEqual(JSON.parse(rejected.stdout), { before: { balance: 100 }, failed: "approval_rejected" });
      assert.equal(t.sent().length, 1, "the rejected call was never sent");
      const twice = await t.inspect(["reject", second, "2"]);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /^error: Call #2 of run run_\w+ is not waiting for a decision \(the run has ended: completed\)\.$/);
    });
  });

  it("approvals: a run's call that an approval rule asks for is listed with the rule's reason", async () => {
    await withFixture(async (t) => {
      const rules = {
        kind: "rules",
        rules: [{ action: "ask", when: [{ pointer: "/cents", present: true }], reason: "Moves money out" }],
        otherwise: { kind: "never" },
      };
      const toolset = join(t.dir, "rules.json");
      writeFileSync(toolset, JSON.stringify({ ...JSON.parse(TOOLSET), policies: { "ledger.transfer": { approval: rules } } }));
      const detached = await collect(t.spawn(["run", join(t.dir, "approval.ts"), "--toolset", toolset, "--detach"]));
      assert.equal(detached.code, 0, detached.stderr);
      const listed = await t.inspect(["approvals"]);
      assert.equal(listed.stdout, `${detached.stdout.trim()}/2  ledger.transfer({"cents":25})  approval: Moves money out`);
    });
  });
});
