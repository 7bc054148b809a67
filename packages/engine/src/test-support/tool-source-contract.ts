/**
 * The tool source seam's behaviour (`sources/tool-source.ts`), as every implementation must show
 * it through the engine: a tool's answer reaches the script and the journal, a tool's refusal is
 * a `ToolError` that is never sent again, every attempt carries the call's key `<run>/<seq>`, and
 * an attempt whose answer is lost is sent again with the same key. Each source's case (host tools,
 * MCP, the built-in http tool) brings real parts — functions in process, a fixture MCP server, a
 * server on loopback — and the suite runs the same tests against each, as the store and sandbox
 * contracts do for theirs.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { JournalEntry, JsonValue, ToolsetSpec } from "@tapedeck/protocol";
import type { ToolOutcome, ToolSource } from "../sources/tool-source.js";
import { runScript, testEngine, type TestEngineOptions } from "./engines.js";

/** One source under test, once its fixtures are up. */
export interface SourceCase {
  /** Engine options whose calls for this source go to `wrap(source)`. */
  options(wrap: (source: ToolSource) => ToolSource): TestEngineOptions;
  readonly spec: ToolsetSpec;
  /** The script's import line (empty for globals like `fetch`). */
  readonly imports: string;
  /** A call the tool answers, as an expression of the script whose value is `value`. */
  readonly answers: { readonly expression: string; readonly value: JsonValue };
  /** A call the tool (or its source) answers with a failure of `code` whose message holds `message`, as an expression of a promise. */
  readonly refused: { readonly expression: string; readonly code: string; readonly message: string };
  /** A call whose every attempt the tool records (`keys`), as an expression of a promise. */
  readonly keyed: string;
  /** The idempotency keys the tool received for `keyed`, one per attempt, in order. */
  keys(): Promise<readonly string[]>;
}

export interface SourceFixture {
  /** Starts what the source reaches; called once, before the tests. */
  start(): Promise<SourceCase>;
  /** Stops it; called once, after the tests. */
  stop(): Promise<void>;
}

/** Loses the answer of every first attempt after the tool has acted on it: the call is interrupted. */
function losingFirstAnswers(source: ToolSource): ToolSource {
  return {
    call: async (request): Promise<ToolOutcome> => {
      const outcome = await source.call(request);
      return request.attempt === 1 ? { kind: "interrupted", reason: "the answer was lost (simulated)" } : outcome;
    },
    ...(source.check ? { check: (tools) => source.check!(tools) } : {}),
    ...(source.close ? { close: () => source.close!() } : {}),
  };
}

const same = (source: ToolSource) => source;

export function describeToolSourceContract(name: string, fixture: SourceFixture): void {
  describe(`the tool source contract: ${name}`, () => {
    let source: SourceCase;
    before(async () => {
      source = await fixture.start();
    });
    after(() => fixture.stop());

    const run = async (body: string, wrap: (s: ToolSource) => ToolSource = same) => {
      const t = await testEngine(source.options(wrap));
      try {
        const { runId, end } = await runScript(t.engine, source.spec, `${source.imports}\nexport default async () => { ${body} };`);
        return { runId, end, journal: await t.engine.journal(runId) };
      } finally {
        await t.cleanup();
      }
    };

    it("answers a call: the script gets the tool's value, journaled as call.completed", async () => {
      const { end, journal } = await run(`return await (${source.answers.expression});`);
      assert.deepEqual(end, { status: "completed", output: source.answers.value });
      assert.deepEqual(kinds(journal), ["run.started", "call.scheduled", "call.completed", "run.completed"]);
    });

    it("a call the tool refuses is a ToolError with its code in the script, journaled as call.failed, and never sent again", async () => {
      let attempts = 0;
      const counting = (inner: ToolSource): ToolSource => ({
        call: (request) => {
          attempts++;
          return inner.call(request);
        },
      });
      const { end, journal } = await run(
        `try { await (${source.refused.expression}); return "answered"; } catch (e) { return e instanceof ToolError ? [e.code, e.message] : "not a ToolError: " + String(e); }`,
        counting,
      );
      if (end.status !== "completed") assert.fail(`the run ${end.status}: ${JSON.stringify(end)}`);
      const [code, message] = end.output as [string, string];
      assert.equal(code, source.refused.code);
      assert.ok(message.includes(source.refused.message), `the failure says ${message}`);
      assert.equal(attempts, 1);
      assert.deepEqual(kinds(journal), ["run.started", "call.scheduled", "call.failed", "run.completed"]);
    });

    it("sends the call's key <run>/<seq> with it", async () => {
      const before = (await source.keys()).length;
      const { runId, end } = await run(`await (${source.answers.expression}); await (${source.keyed}); return null;`);
      assert.equal(end.status, "completed");
      assert.deepEqual((await source.keys()).slice(before), [`${runId}/2`]);
    });

    it("an attempt whose answer is lost is sent again with the same key, and the script gets the second answer", async () => {
      const before = (await source.keys()).length;
      const { runId, end, journal } = await run(`await (${source.keyed}); return await (${source.answers.expression});`, losingFirstAnswers);
      assert.deepEqual(end, { status: "completed", output: source.answers.value });
      assert.deepEqual((await source.keys()).slice(before), [`${runId}/1`, `${runId}/1`]);
      const attempts = journal.filter((e): e is Extract<JournalEntry, { kind: "call.attempt" }> => e.kind === "call.attempt");
      assert.deepEqual(
        attempts.map((e) => [e.seq, e.attempt]),
        [
          [1, 2],
          [2, 2],
        ],
      );
    });
  });
}

function kinds(journal: readonly JournalEntry[]): string[] {
  return journal.map((entry) => entry.kind).filter((kind) => kind !== "log");
}
