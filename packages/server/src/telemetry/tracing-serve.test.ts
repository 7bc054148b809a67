import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { collect, withCliTest } from "../cli/test-support/child-cli.js";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./test-support/otlp-receiver.js";
import { startTraceparentMcpServer, type TraceparentMcpServer } from "./test-support/traceparent-mcp-server.js";

/**
 * OpenTelemetry spans from a real `tapedeck serve`, exported over OTLP/HTTP (JSON) to a loopback
 * receiver as the standard `OTEL_*` variables say, and the trace context a loopback MCP server
 * (the official SDK) received with each call. The run calls the server, waits for a signal, and
 * is finished by a second server on the same data folder: one trace across the restart, the
 * call spans being the `traceparent` the MCP server saw. Spans are read after each server
 * stopped: a stop flushes what is batched (no waiting for the batch's timer).
 */
let receiver: OtlpReceiver;
let mcp: TraceparentMcpServer;
let first: ServeChild;

const SCRIPT = `import { fx } from "tapedeck:tools";
export default async () => {
  const a = await fx.echo({ text: "before" });
  const go = await signal("go");
  const b = await fx.echo({ text: "after" });
  return [a, go, b];
};`;

function tracingEnv(): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "tapedeck-under-test" };
}

before(async () => {
  receiver = await startOtlpReceiver();
  mcp = await startTraceparentMcpServer();
  first = await startServeChild({ env: tracingEnv() });
});

after(async () => {
  await first.stop();
  first.cleanup();
  await mcp.close();
  await receiver.close();
});

function spansNamed(name: string): ReceivedSpan[] {
  return receiver.spans.filter((span) => span.name === name);
}

function only(spans: readonly ReceivedSpan[], what: string): ReceivedSpan {
  assert.equal(spans.length, 1, `${what}: ${JSON.stringify(spans, null, 1)}`);
  return spans[0]!;
}

describe("tracing a run through serve, over a restart", () => {
  it("exports a run span, a tools/call span per MCP call (the traceparent its server saw) and a wait span, all in one trace across two server processes", async () => {
    const admin = first.client(first.adminKey!);
    const { id: toolset } = await admin.toolsets.create({ mcpServers: { fx: { url: mcp.url } } });
    const started = await admin.runs.start({ toolset, source: SCRIPT });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    const runId = started.run.id;
    const waiting = await admin.runs.get(runId, { wait: 30 });
    assert.equal(waiting.status, "waiting", JSON.stringify(waiting));
    assert.equal(await first.stop(), 0, first.stderr());

    // The first process exported the first call's span; the run and its wait were still open: not exported.
    const firstCall = only(spansNamed("tools/call echo"), "the first call's span, after the first stop");
    assert.equal(spansNamed(`invoke_workflow ${toolset}`).length, 0, "a run that has not ended exports no run span");

    const second = await startServeChild({ dataDir: first.dataDir, env: tracingEnv() });
    try {
      const client = second.client(first.adminKey!);
      await client.runs.signal(runId, { name: "go", payload: "now" });
      const done = await client.runs.get(runId, { wait: 30 });
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.deepEqual(done.output, ["before", "now", "after"]);
    } finally {
      assert.equal(await second.stop(), 0, second.stderr());
    }

    const run = only(spansNamed(`invoke_workflow ${toolset}`), "the run span");
    const calls = spansNamed("tools/call echo");
    assert.equal(calls.length, 2, JSON.stringify(calls));
    const wait = only(spansNamed("wait signal go"), "the signal's wait span");

    // One trace; the run span its root; the calls and the wait its children.
    assert.equal(run.parentSpanId, undefined);
    for (const span of [...calls, wait]) {
      assert.equal(span.traceId, run.traceId, span.name);
      assert.equal(span.parentSpanId, run.spanId, span.name);
    }
    assert.equal(calls[0]!.spanId, firstCall.spanId);
    assert.notEqual(calls[0]!.spanId, calls[1]!.spanId);

    // The run span covers the whole run, from its start in the first process.
    assert.ok(BigInt(run.startTimeUnixNano) <= BigInt(calls[0]!.startTimeUnixNano), "the run span starts when the run did");
    assert.ok(BigInt(run.endTimeUnixNano) >= BigInt(calls[1]!.endTimeUnixNano));
    assert.ok(BigInt(wait.startTimeUnixNano) < BigInt(wait.endTimeUnixNano));
    assert.equal(run.kind, 1, "INTERNAL");
    assert.equal(run.status, 0);
    assert.equal(run.attributes["tapedeck.run.id"], runId);
    assert.equal(run.attributes["tapedeck.run.status"], "completed");
    assert.equal(run.attributes["gen_ai.operation.name"], "invoke_workflow");
    assert.equal(run.resource["service.name"], "tapedeck-under-test");
    assert.equal(run.scope, "@tapedeck/engine");

    // Each call span is named and attributed by the GenAI and MCP conventions, its attempt an event.
    for (const [i, call] of calls.entries()) {
      assert.equal(call.kind, 3, "CLIENT");
      assert.equal(call.attributes["mcp.method.name"], "tools/call");
      assert.equal(call.attributes["gen_ai.tool.name"], "echo");
      assert.equal(call.attributes["gen_ai.operation.name"], "execute_tool");
      assert.equal(typeof call.attributes["gen_ai.tool.call.id"], "string");
      assert.equal(call.attributes["tapedeck.run.id"], runId);
      assert.equal(call.attributes["tapedeck.tool.source"], "mcp");
      assert.equal(call.attributes["tapedeck.tool"], "fx.echo");
      assert.deepEqual(
        call.events.map((event) => [event.name, event.attributes["tapedeck.call.attempt"]]),
        [["tapedeck.call.attempt", 1]],
      );
      // What the MCP server received is the call span's own context: its spans join the trace under it.
      assert.equal(mcp.calls[i]!.traceparent, `00-${call.traceId}-${call.spanId}-01`, `call ${i}`);
    }
    assert.deepEqual(
      mcp.calls.map((call) => call.text),
      ["before", "after"],
    );
    assert.equal(wait.attributes["tapedeck.wait.kind"], "signal");
    assert.equal(wait.attributes["tapedeck.signal.name"], "go");
    assert.equal(wait.attributes["tapedeck.run.id"], runId);
  });

  it("a run started with a traceparent joins that trace: its span's parent is the caller's span", async () => {
    const caller = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
    const traced = await startServeChild({ env: tracingEnv() });
    let runId = "";
    try {
      const admin = traced.client(traced.adminKey!);
      const { id: toolset } = await admin.toolsets.create({ mcpServers: { fx: { url: mcp.url } } });
      const started = await admin.runs.start({
        toolset,
        source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "joined" });`,
        traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
      });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      runId = started.run.id;
      assert.equal((await admin.runs.get(runId, { wait: 30 })).status, "completed");
    } finally {
      assert.equal(await traced.stop(), 0, traced.stderr());
      traced.cleanup();
    }
    const ofRun = receiver.spans.filter((span) => span.attributes["tapedeck.run.id"] === runId);
    const run = only(
      ofRun.filter((span) => span.name.startsWith("invoke_workflow ")),
      "the run span",
    );
    const call = only(
      ofRun.filter((span) => span.name === "tools/call echo"),
      "the call span",
    );
    assert.equal(run.traceId, caller.traceId);
    assert.equal(run.parentSpanId, caller.spanId);
    assert.equal(call.traceId, caller.traceId);
    assert.equal(call.parentSpanId, run.spanId);
    assert.equal(mcp.calls.at(-1)!.traceparent, `00-${caller.traceId}-${call.spanId}-01`);
  });

  it("tapedeck run exports its run's spans before the process exits", async () => {
    await withCliTest("tapedeck-otel-run-", async ({ dir, spawn }) => {
      writeFileSync(join(dir, "toolset.json"), JSON.stringify({ mcpServers: { fx: { url: mcp.url } } }));
      writeFileSync(join(dir, "script.ts"), `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "from the CLI" });`);
      const done = await collect(spawn(["run", join(dir, "script.ts"), "--toolset", join(dir, "toolset.json"), "--data", join(dir, "data")], tracingEnv()));
      assert.equal(done.code, 0, done.stderr);
      const runId = /\b(run_[0-9a-z]+)\b/.exec(done.stdout + done.stderr)?.[1];
      assert.ok(runId, done.stdout + done.stderr);
      const ofRun = receiver.spans.filter((span) => span.attributes["tapedeck.run.id"] === runId);
      const run = only(
        ofRun.filter((span) => span.name.startsWith("invoke_workflow ")),
        "the CLI run's span",
      );
      assert.equal(run.attributes["tapedeck.run.status"], "completed");
      const call = only(
        ofRun.filter((span) => span.name === "tools/call echo"),
        "the CLI run's call",
      );
      assert.equal(call.parentSpanId, run.spanId);
      assert.equal(mcp.calls.at(-1)!.traceparent, `00-${call.traceId}-${call.spanId}-01`);
    });
  });

  it("without the OTEL_* variables a server exports nothing", async () => {
    const before = receiver.requests();
    const plain = await startServeChild();
    try {
      const admin = plain.client(plain.adminKey!);
      const { id: toolset } = await admin.toolsets.create({ mcpServers: { fx: { url: mcp.url } } });
      const started = await admin.runs.start({
        toolset,
        source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "quiet" });`,
      });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      assert.equal((await admin.runs.get(started.run.id, { wait: 30 })).status, "completed");
      // Still sent: the trace context Tapedeck derives from the run, whatever the tracing.
      assert.match(mcp.calls.at(-1)!.traceparent ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    } finally {
      assert.equal(await plain.stop(), 0, plain.stderr());
      plain.cleanup();
    }
    assert.equal(receiver.requests(), before);
  });

  it("an exporter tapedeck cannot make is refused with what to set instead", async () => {
    await assert.rejects(
      startServeChild({ env: { OTEL_TRACES_EXPORTER: "zipkin" } }),
      /OTEL_TRACES_EXPORTER=zipkin is not one tapedeck can export to: use otlp/,
    );
  });
});
