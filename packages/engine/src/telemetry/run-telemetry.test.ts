import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { HostToolContext } from "../sources/in-process-host-tools.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { ManualClock } from "../test-support/manual-clock.js";
import { TapedeckIdGenerator } from "./id-generator.js";
import { NO_TELEMETRY, startRunTelemetry } from "./run-telemetry.js";
import { callSpanId, runSpanId, runTraceId, waitSpanId } from "./span-ids.js";

/**
 * The engine's spans with the OpenTelemetry SDK registered (`TapedeckIdGenerator`, every span
 * exported as it ends): an engine that stops mid-call leaves its open spans unexported, and the
 * engine that resumes the run exports each span once, under the ids derived from the journal,
 * the resumed call's `traceparent` being its span. Through the server and OTLP:
 * `packages/server/src/telemetry/tracing-serve.test.ts`.
 */
after(() => testSandboxes().close());

const exporter = new InMemorySpanExporter();
let provider: BasicTracerProvider;

before(() => {
  provider = new BasicTracerProvider({ idGenerator: new TapedeckIdGenerator(), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
});

after(async () => {
  await provider.shutdown();
  trace.disable();
});

afterEach(() => exporter.reset());

const SCRIPT = `import { w } from "tapedeck:tools";
export default async () => [await w.read({ n: 1 }), await w.write({ n: 2 })];`;

function named(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name === name);
}

describe("engine spans", () => {
  it("an engine stopped mid-call exports only what ended; the engine that resumes the run ends each span once, under the journal's ids", async () => {
    const first = new ToolHarness({ "w.read": (a: { n: number }) => a.n * 10, "w.write": () => "first engine" });
    first.hold("w.write");
    const t = await testEngine({ hostTools: first.module() });
    const { id } = await t.engine.registerToolset(harnessToolset(["w.read", "w.write"]));
    const started = await t.engine.start({ toolset: id, source: SCRIPT });
    if (started.kind !== "started") throw new Error("refused");
    const runId = started.runId;
    await first.heldCount(1);
    await t.engine.close();
    assert.deepEqual(
      exporter.getFinishedSpans().map((span) => span.name),
      ["execute_tool w.read"],
      "the run and the call in flight were not over: not exported",
    );

    const seen: string[] = [];
    const engine = await t.reopen({
      hostTools: { w: { read: () => "must not be called", write: (_args: unknown, ctx: HostToolContext) => (seen.push(ctx.traceparent), "second engine") } },
    });
    try {
      const [resumed] = await engine.resume();
      const end = await resumed!.end;
      assert.equal(end.status, "completed");
    } finally {
      await engine.close();
      await t.cleanup();
    }

    const run = named(`invoke_workflow ${id}`);
    const read = named("execute_tool w.read");
    const write = named("execute_tool w.write");
    assert.equal(run.length, 1);
    assert.equal(read.length, 1);
    assert.equal(write.length, 1, "the interrupted call is one span, ended by the engine that sent it again");
    const traceId = runTraceId(runId);
    assert.deepEqual(run[0]!.spanContext(), { traceId, spanId: runSpanId(runId), traceFlags: 1, traceState: undefined });
    assert.equal(run[0]!.parentSpanContext, undefined);
    assert.equal(write[0]!.spanContext().spanId, callSpanId(`${runId}/2`));
    for (const call of [...read, ...write]) {
      assert.equal(call.spanContext().traceId, traceId);
      assert.equal(call.parentSpanContext?.spanId, runSpanId(runId));
      assert.equal(call.attributes["tapedeck.tool.source"], "host");
      assert.equal(call.attributes["gen_ai.tool.name"], call.name.slice("execute_tool ".length));
      assert.equal(call.attributes["mcp.method.name"], undefined);
    }
    assert.deepEqual(
      write[0]!.events.map((event) => [event.name, event.attributes?.["tapedeck.call.attempt"]]),
      [
        ["tapedeck.call.resumed", 2],
        ["tapedeck.call.attempt", 2],
      ],
    );
    assert.deepEqual(seen, [`00-${traceId}-${callSpanId(`${runId}/2`)}-01`], "the tool got the call span's context");
    // The run span starts at the run's start, before the first engine stopped.
    const started0 = run[0]!.startTime[0] * 1e3 + run[0]!.startTime[1] / 1e6;
    const read0 = read[0]!.startTime[0] * 1e3 + read[0]!.startTime[1] / 1e6;
    assert.ok(started0 <= read0);
    assert.equal(run[0]!.attributes["tapedeck.run.status"], "completed");
  });

  it("an approval and a sleep are spans of their own, children of the run, under ids of the run and the call's seq", async () => {
    const clock = new ManualClock();
    const harness = new ToolHarness({ "w.write": () => "written" });
    const t = await testEngine({ hostTools: harness.module(), clock });
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["w.write"], { policies: { "w.write": { approval: true } } }));
      const started = await t.engine.start({
        toolset: id,
        source: `import { w } from "tapedeck:tools";\nexport default async () => { const a = await w.write({ n: 1 }); await sleep("1h"); return a; };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      const runId = started.runId;
      assert.equal((await t.engine.settled(runId))?.status, "waiting");
      await t.engine.approve(runId, 1, { reason: "fine" });
      await clock.timers(1);
      clock.tick(60 * 60 * 1000);
      assert.equal((await started.end).status, "completed");
      const approval = named("wait approval w.write");
      const sleep = named("wait sleep");
      assert.equal(approval.length, 1);
      assert.equal(sleep.length, 1);
      assert.equal(approval[0]!.spanContext().spanId, waitSpanId(runId, 1));
      assert.equal(sleep[0]!.spanContext().spanId, waitSpanId(runId, 2));
      for (const wait of [approval[0]!, sleep[0]!]) {
        assert.equal(wait.spanContext().traceId, runTraceId(runId));
        assert.equal(wait.parentSpanContext?.spanId, runSpanId(runId));
        assert.equal(wait.attributes["tapedeck.run.id"], runId);
      }
      assert.equal(approval[0]!.attributes["tapedeck.wait.kind"], "approval");
      assert.equal(sleep[0]!.attributes["tapedeck.wait.kind"], "sleep");
      // The sleep span lasts the hour the (manual) clock moved.
      const ms = (time: readonly [number, number]) => time[0] * 1e3 + time[1] / 1e6;
      assert.equal(Math.round(ms(sleep[0]!.endTime) - ms(sleep[0]!.startTime)), 60 * 60 * 1000);
      assert.equal(named("execute_tool w.write").length, 1, "the approved call, sent once");
    } finally {
      await t.cleanup();
    }
  });

  it("with no tracer provider a run's telemetry is the no-op one", () => {
    trace.disable();
    try {
      assert.equal(startRunTelemetry({ id: "run_x", toolsetId: "ts_x" }, [], undefined), NO_TELEMETRY);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
  });
});
