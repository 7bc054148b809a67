/**
 * The sandbox seam's behaviour (`sandbox.ts`), as every implementation must show it: what a script
 * sees (tools, ToolError, Date, Math.random, console), what the engine sees (steps, seq, ends),
 * delivery in batches and replay, and the host's mistakes. Each implementation's test runs it
 * (`describeSandboxContract`), as Hono runs one router suite against every router; what only one
 * implementation does (QuickJS's limits, workers, watchdog) stays in that implementation's test.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue, ToolFailure } from "@tapedeck/protocol";
import type { Delivery, GuestError, IssuedCall, LogLine, Sandbox, SandboxFactory, SandboxLimits, SandboxOptions, ScriptEnd, Step } from "./sandbox.js";

const MiB = 1024 * 1024;
export const LIMITS: SandboxLimits = { memoryBytes: 32 * MiB, stackBytes: 256 * 1024, cpuMsPerStep: 300, logLineChars: 200 };
export const STARTED_AT = Date.UTC(2025, 0, 2, 3, 4, 5);

export function options(js: string, overrides: Partial<SandboxOptions> = {}): SandboxOptions {
  return {
    runId: "run_test",
    js,
    filename: "script.js",
    tools: { github: ["list_issues", "list-prs", "get"], slack: ["post"] },
    input: null,
    seed: "seed-1",
    startedAt: STARTED_AT,
    limits: LIMITS,
    ...overrides,
  };
}

export function ok(seq: number, value: JsonValue, at = STARTED_AT + seq * 1000): Delivery {
  return { seq, at, ok: true, value };
}

export function fail(seq: number, error: ToolFailure, at = STARTED_AT + seq * 1000): Delivery {
  return { seq, at, ok: false, error };
}

/** Delivers one outcome (a batch of one): its step, or an empty one when the script has ended. */
export async function deliverOne(sandbox: Sandbox, delivery: Delivery): Promise<Step> {
  const [step] = await sandbox.deliverEach([delivery]);
  return step ?? { calls: [], logs: [] };
}

/** What a whole run looked like: every call, log and delivery, and the end. */
export interface Transcript {
  calls: IssuedCall[];
  logs: LogLine[];
  deliveries: Delivery[];
  end: ScriptEnd | undefined;
}

/**
 * Starts the script and answers every call, oldest first, with `answer(call)`, until it ends.
 * The deliveries made are recorded (the journal a replay would use).
 */
export async function drive(sandbox: Sandbox, answer: (call: IssuedCall) => Delivery): Promise<Transcript> {
  const transcript: Transcript = { calls: [], logs: [], deliveries: [], end: undefined };
  const open: IssuedCall[] = [];
  const take = (step: Step): void => {
    transcript.calls.push(...step.calls);
    transcript.logs.push(...step.logs);
    open.push(...step.calls);
    transcript.end ??= step.end;
  };
  take(await sandbox.start());
  while (transcript.end === undefined) {
    const call = open.shift();
    if (call === undefined) throw new Error("The script waits for nothing and has not ended.");
    const delivery = answer(call);
    transcript.deliveries.push(delivery);
    take(await deliverOne(sandbox, delivery));
  }
  return transcript;
}

/** Opening sandboxes of one factory, and running scripts that make no calls to their end. */
export function probe(factory: () => SandboxFactory) {
  const open = (js: string, overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> => factory().create(options(js, overrides));
  const endOf = async (js: string, overrides: Partial<SandboxOptions> = {}): Promise<ScriptEnd> => {
    const sandbox = await open(js, overrides);
    try {
      const step = await sandbox.start();
      assert.ok(step.end, "the script should have ended");
      return step.end;
    } finally {
      await sandbox.dispose();
    }
  };
  const outputOf = async (js: string, overrides: Partial<SandboxOptions> = {}): Promise<JsonValue> => {
    const end = await endOf(js, overrides);
    if (!end.ok) assert.fail(`the script failed: ${JSON.stringify(end.error)}`);
    return end.output;
  };
  const errorOf = async (js: string, overrides: Partial<SandboxOptions> = {}): Promise<GuestError> => {
    const end = await endOf(js, overrides);
    if (end.ok) assert.fail(`the script succeeded: ${JSON.stringify(end.output)}`);
    return end.error;
  };
  return { open, endOf, outputOf, errorOf };
}

/** Runs the sandbox contract against `factory` (called in each test: it may make a fresh one, or share one). */
export function describeSandboxContract(name: string, factory: () => SandboxFactory): void {
  const { open, outputOf, errorOf } = probe(factory);

  describe(`the sandbox contract: ${name}`, () => {
    describe("script output", () => {
      it("is the default export's value", async () => {
        assert.deepEqual(await outputOf("export default { a: [1, 'two', null] };"), { a: [1, "two", null] });
      });

      it("is what the default export function returns for the input, awaited", async () => {
        const js = "export default async function (input) { await null; return { doubled: input.n * 2 }; }";
        assert.deepEqual(await outputOf(js, { input: { n: 21 } }), { doubled: 42 });
      });

      it("is null without a default export, or when it is undefined", async () => {
        assert.equal(await outputOf("export const x = 1;"), null);
        assert.equal(await outputOf("export default () => {};"), null);
      });

      it("waits for top-level await", async () => {
        assert.equal(await outputOf("const v = await Promise.resolve(5); export default v + 1;"), 6);
      });

      it("fails with kind output when it is not JSON", async () => {
        for (const js of ["export default () => () => 1;", "const o = {}; o.self = o; export default o;", "export default { big: 10n };"]) {
          const error = await errorOf(js);
          assert.equal(error.kind, "output", js);
          assert.match(error.message, /output is not JSON/);
        }
      });

      it("reports a thrown error with its name, message and position", async () => {
        const js = "export default function () {\n  throw new RangeError('too far');\n}";
        const error = await errorOf(js);
        assert.equal(error.kind, "script");
        assert.equal(error.name, "RangeError");
        assert.equal(error.message, "too far");
        assert.match(error.stack ?? "", /script\.js:2:/);
        assert.doesNotMatch(error.stack ?? "", /tapedeck:prelude/);
      });

      it("reports a syntax error", async () => {
        const error = await errorOf("export default {");
        assert.equal(error.kind, "script");
        assert.equal(error.name, "SyntaxError");
      });
    });

    describe("tool calls", () => {
      it("get seq in issue order, tool group.name and JSON args", async () => {
        const sandbox = await open(`
          import { github, slack } from "tapedeck:tools";
          export default async function () {
            const a = github.list_issues({ repo: "x", when: new Date(0), skip: undefined });
            const b = github["list-prs"]();
            const c = slack.post({ text: "hi", n: [1, 2] });
            return Promise.all([a, b, c]);
          }`);
        const step = await sandbox.start();
        assert.deepEqual(step.calls, [
          { seq: 1, tool: "github.list_issues", args: { repo: "x", when: "1970-01-01T00:00:00.000Z" } },
          { seq: 2, tool: "github.list-prs", args: {} },
          { seq: 3, tool: "slack.post", args: { text: "hi", n: [1, 2] } },
        ]);
        assert.equal(step.end, undefined);
        await sandbox.dispose();
      });

      it("throw a TypeError at once for arguments that are not JSON", async () => {
        const output = await outputOf(`
          import { github } from "tapedeck:tools";
          export default function () {
            const messages = [];
            for (const args of [{ f() {} }, (() => { const o = {}; o.o = o; return o; })(), { n: 1n }]) {
              try { github.get(args); } catch (e) { messages.push(e.name + ": " + e.message); }
            }
            return messages;
          }`);
        assert.ok(Array.isArray(output));
        assert.equal(output.length, 3);
        for (const message of output) {
          assert.equal(typeof message, "string");
          assert.match(message as string, /^TypeError: github\.get: the arguments are not JSON/);
        }
      });

      it("resolve with the delivered value and reject with a ToolError the script can catch", async () => {
        const sandbox = await open(`
          import { github, ToolError } from "tapedeck:tools";
          export default async function () {
            const issues = await github.list_issues({});
            try {
              await github.get({ id: 7 });
              return "unreachable";
            } catch (e) {
              return {
                issues,
                isToolError: e instanceof ToolError && e instanceof Error,
                name: e.name, code: e.code, message: e.message, retryable: e.retryable,
                details: e.details, tool: e.tool, seq: e.seq,
                stackAtCall: /script\\.js:6:/.test(e.stack),
              };
            }
          }`);
        await sandbox.start();
        const first = await deliverOne(sandbox, ok(1, [{ id: 7 }]));
        assert.deepEqual(first.calls, [{ seq: 2, tool: "github.get", args: { id: 7 } }]);
        const second = await deliverOne(sandbox, fail(2, { code: "not_found", message: "no issue 7", retryable: false, details: { id: 7 } }));
        assert.deepEqual(second.end, {
          ok: true,
          output: {
            issues: [{ id: 7 }],
            isToolError: true,
            name: "ToolError",
            code: "not_found",
            message: "no issue 7",
            retryable: false,
            details: { id: 7 },
            tool: "github.get",
            seq: 2,
            stackAtCall: true,
          },
        });
        await sandbox.dispose();
      });

      it("end the script with the failure when a ToolError is not caught", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => github.get({ id: 1 });`);
        await sandbox.start();
        const step = await deliverOne(sandbox, fail(1, { code: "rate_limited", message: "slow down", retryable: true }));
        assert.ok(step.end && !step.end.ok);
        assert.equal(step.end.error.kind, "script");
        assert.equal(step.end.error.name, "ToolError");
        assert.deepEqual(step.end.error.failure, { code: "rate_limited", message: "slow down", retryable: true });
        assert.equal(step.end.error.seq, 1);
        await sandbox.dispose();
      });

      it("lets a script throw its own ToolError", async () => {
        const error = await errorOf(`
          import { ToolError } from "tapedeck:tools";
          throw new ToolError("invalid_input", "bad input", { details: { field: "x" } });`);
        assert.equal(error.name, "ToolError");
        assert.deepEqual(error.failure, { code: "invalid_input", message: "bad input", details: { field: "x" } });
        assert.equal(error.seq, undefined);
      });

      it("settle Promise.all in any delivery order", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => {
            const order = [];
            const all = await Promise.all([1, 2, 3].map((id) => github.get({ id }).then((v) => { order.push(id); return v; })));
            return { all, order };
          }`);
        assert.equal((await sandbox.start()).calls.length, 3);
        await deliverOne(sandbox, ok(3, "c"));
        await deliverOne(sandbox, ok(1, "a"));
        const step = await deliverOne(sandbox, ok(2, "b"));
        assert.deepEqual(step.end, { ok: true, output: { all: ["a", "b", "c"], order: [3, 1, 2] } });
        await sandbox.dispose();
      });

      it("settle Promise.race with the first delivery, and ignore the losers' late results", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default () => Promise.race([github.get({ id: 1 }), github.get({ id: 2 }), github.get({ id: 3 })]);`);
        await sandbox.start();
        const step = await deliverOne(sandbox, ok(2, "second"));
        assert.deepEqual(step.end, { ok: true, output: "second" });
        assert.deepEqual(await deliverOne(sandbox, ok(1, "late")), { calls: [], logs: [] });
        await sandbox.dispose();
        assert.deepEqual(await deliverOne(sandbox, ok(3, "later")), { calls: [], logs: [] });
      });
    });

    describe("host mistakes", () => {
      it("reject delivering a seq not issued, settled twice, or starting twice; the sandbox goes on", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => [await github.get({}), await github.get({})];`);
        await sandbox.start();
        await assert.rejects(sandbox.start(), /start\(\) was already called/);
        await assert.rejects(deliverOne(sandbox, ok(5, null)), /seq 5: the script has not issued/);
        await deliverOne(sandbox, ok(1, "a"));
        await assert.rejects(deliverOne(sandbox, ok(1, "again")), /seq 1: that call was already settled/);
        const step = await deliverOne(sandbox, ok(2, "b"));
        assert.deepEqual(step.end, { ok: true, output: ["a", "b"] });
        await sandbox.dispose();
        await sandbox.dispose();
        await assert.rejects(sandbox.start(), /disposed/);
      });

      it("refuse a tool group named ToolError", async () => {
        await assert.rejects(factory().create(options("export default 1", { tools: { ToolError: ["x"] } })), /ToolError/);
      });
    });

    describe("replay", () => {
      const SCRIPT = `
        import { github, slack } from "tapedeck:tools";
        export default async function (input) {
          const issues = await github.list_issues({ repo: input.repo });
          console.log("found", issues.length, "at", new Date().toISOString());
          const winner = await Promise.race(issues.map((id) => github.get({ id })));
          const results = await Promise.allSettled(issues.map((id) => slack.post({ id, r: Math.random() })));
          console.warn(results.map((r) => r.status).join(","));
          return { winner, settled: results.length, now: Date.now(), r: Math.random() };
        }`;
      const answer = (call: IssuedCall): Delivery => {
        const at = STARTED_AT + call.seq * 777;
        if (call.tool === "github.list_issues") return ok(call.seq, [1, 2, 3], at);
        if (call.seq % 3 === 0) return fail(call.seq, { code: "flaky", message: `seq ${call.seq}` }, at);
        return ok(call.seq, `result ${call.seq}`, at);
      };

      it("gives the same calls, logs and end as delivering one by one, in one round trip", async () => {
        const live = await drive(await open(SCRIPT, { input: { repo: "r" } }), answer);
        assert.ok(live.end?.ok, JSON.stringify(live.end));

        const sandbox = await open(SCRIPT, { input: { repo: "r" } });
        const first = await sandbox.start();
        const replayed = await sandbox.replay(live.deliveries);
        assert.equal(replayed.delivered, live.deliveries.length);
        assert.equal(replayed.stalledAt, undefined);
        assert.deepEqual([...first.calls, ...replayed.calls], live.calls);
        assert.deepEqual([...first.logs, ...replayed.logs], live.logs);
        assert.deepEqual(replayed.end, live.end);
        await sandbox.dispose();
      });

      it("stops where a delivery names a seq not issued yet (stalledAt), and can continue", async () => {
        const live = await drive(await open(SCRIPT, { input: { repo: "r" } }), answer);
        const sandbox = await open(SCRIPT, { input: { repo: "r" } });
        await sandbox.start();
        // Seq 5 is issued only after the race settles: deliver it before seq 2 to stall.
        const byseq = new Map(live.deliveries.map((d) => [d.seq, d]));
        const shuffled = [byseq.get(1), byseq.get(5), byseq.get(2)].filter((d) => d !== undefined);
        const stalled = await sandbox.replay(shuffled);
        assert.equal(stalled.delivered, 1);
        assert.equal(stalled.stalledAt, 5);
        assert.equal(stalled.end, undefined);
        const rest = await sandbox.replay(live.deliveries.slice(1));
        assert.deepEqual(rest.end, live.end);
        await sandbox.dispose();
      });

      it("stops at the end of the script and ignores what follows", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => Promise.race([github.get({}), github.get({})]);`);
        await sandbox.start();
        const step = await sandbox.replay([ok(1, "one"), ok(2, "two")]);
        assert.equal(step.delivered, 1);
        assert.deepEqual(step.end, { ok: true, output: "one" });
        assert.deepEqual(await sandbox.replay([ok(2, "two")]), { calls: [], logs: [], delivered: 0 });
        await sandbox.dispose();
      });
    });

    describe("determinism", () => {
      it("Date is the time of the latest delivery, in UTC", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => {
            const before = [Date.now(), new Date().getTime()];
            await github.get({});
            const d = new Date();
            return {
              before, after: Date.now(), offset: d.getTimezoneOffset(), hours: d.getHours(), text: d.toString(),
              local: new Date(2024, 0, 2, 3).toISOString(), utc: Date.UTC(2024, 0, 1), parsed: Date.parse("2024-01-01T00:00:00"),
              fixed: new Date(86400000).toISOString(), call: typeof Date(),
            };
          }`);
        await sandbox.start();
        const at = Date.UTC(2030, 5, 6, 7, 8, 9);
        const step = await deliverOne(sandbox, ok(1, null, at));
        assert.deepEqual(step.end, {
          ok: true,
          output: {
            before: [STARTED_AT, STARTED_AT],
            after: at,
            offset: 0,
            hours: 7,
            text: "Thu Jun 06 2030 07:08:09 GMT+0000",
            local: "2024-01-02T03:00:00.000Z",
            utc: Date.UTC(2024, 0, 1),
            parsed: Date.UTC(2024, 0, 1),
            fixed: "1970-01-02T00:00:00.000Z",
            call: "string",
          },
        });
        await sandbox.dispose();
      });

      it("Math.random is the same sequence for the same seed, another for another seed", async () => {
        const js = "export default () => Array.from({ length: 5 }, () => Math.random());";
        const a = await outputOf(js, { seed: "run_1" });
        const b = await outputOf(js, { seed: "run_1" });
        const c = await outputOf(js, { seed: "run_2" });
        assert.deepEqual(a, b);
        assert.notDeepEqual(a, c);
        assert.ok(Array.isArray(a) && a.every((x) => typeof x === "number" && x >= 0 && x < 1));
      });
    });

    describe("console", () => {
      it("turns calls into log lines with levels and ordinals, formatted like Node roughly", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => {
            const cycle = { name: "c" }; cycle.self = cycle;
            console.log("text", 1, true, null, undefined, { a: [1, "x"] }, cycle);
            console.error(new TypeError("bad"), [new Error("inner")]);
            console.debug(); console.info(10n, () => 1);
            await github.get({});
            console.warn("after", "x".repeat(500));
          }`);
        const first = await sandbox.start();
        assert.deepEqual(first.logs, [
          { level: "log", message: 'text 1 true null undefined {"a":[1,"x"]} {"name":"c","self":"[Circular]"}', ordinal: 0 },
          { level: "error", message: 'TypeError: bad ["Error: inner"]', ordinal: 1 },
          { level: "debug", message: "", ordinal: 2 },
          { level: "info", message: "10n [Function: (anonymous)]", ordinal: 3 },
        ]);
        const second = await deliverOne(sandbox, ok(1, null));
        assert.equal(second.logs.length, 1);
        const line = second.logs[0];
        assert.equal(line?.ordinal, 4);
        assert.equal(line?.level, "warn");
        assert.equal(line?.message, `after ${"x".repeat(LIMITS.logLineChars - 6)}… [cut: 306 more characters]`);
        await sandbox.dispose();
      });
    });

    describe("delivery in batches", () => {
      it("gives one step per delivery, exactly as one delivery at a time would", async () => {
        const SCRIPT = `
          import { github } from "tapedeck:tools";
          export default async () => {
            const seen = [];
            const calls = [1, 2, 3].map((id) => github.get({ id }).then((v) => { seen.push(v); console.log("got", v, new Date().toISOString()); return v; }));
            await Promise.all(calls);
            return { seen, r: Math.random() };
          };`;
        const deliveries = [ok(2, "b"), ok(1, "a"), ok(3, "c")];
        const oneByOne = await open(SCRIPT);
        await oneByOne.start();
        const single: Step[] = [];
        for (const delivery of deliveries) single.push(await deliverOne(oneByOne, delivery));
        const batched = await open(SCRIPT);
        await batched.start();
        assert.deepEqual(await batched.deliverEach(deliveries), single);
        const end = single[2]?.end;
        assert.ok(end?.ok, JSON.stringify(end));
        assert.deepEqual((end.output as { seen: unknown }).seen, ["b", "a", "c"]);
        await Promise.all([oneByOne.dispose(), batched.dispose()]);
      });

      it("stops after the step that ends the script, and gives no step once it has ended", async () => {
        const sandbox = await open(`
          import { github } from "tapedeck:tools";
          export default async () => Promise.race([github.get({}), github.get({})]);`);
        await sandbox.start();
        const steps = await sandbox.deliverEach([ok(1, "one"), ok(2, "two")]);
        assert.equal(steps.length, 1);
        assert.deepEqual(steps[0]?.end, { ok: true, output: "one" });
        assert.deepEqual(await sandbox.deliverEach([ok(2, "two")]), []);
        await sandbox.dispose();
      });
    });
  });
}
