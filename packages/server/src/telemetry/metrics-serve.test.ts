import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { createKey, startServeChild, type ServeChild } from "../http/test-support/serve-child.js";
import { startTraceparentMcpServer, type TraceparentMcpServer } from "./test-support/traceparent-mcp-server.js";

/**
 * `GET /metrics` of a real `tapedeck serve`, parsed by a Prometheus text-format parser: the
 * operator's key only; runs by status, calls and their latency per source and tool, journal
 * commits, host tasks, workers, webhook failures and the sandbox pool, after real runs.
 */
let server: ServeChild;
let mcp: TraceparentMcpServer;
let adminKey: string;

before(async () => {
  mcp = await startTraceparentMcpServer();
  server = await startServeChild();
  adminKey = server.adminKey!;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
  await mcp.close();
});

function scrape(key?: string): Promise<Response> {
  return fetch(`${server.url}/metrics`, key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } });
}

type Families = ReturnType<typeof parsePrometheusTextFormat>;

/** The scrape's families, as the parser reads them, and its text. */
async function metrics(): Promise<Families & { readonly text: string }> {
  const response = await scrape(adminKey);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return Object.assign(parsePrometheusTextFormat(text), { text });
}

function family(families: Families, name: string): Families[number] {
  const found = families.find((f) => f.name === name);
  assert.ok(found, `no ${name} in ${families.map((f) => f.name).join(", ")}`);
  return found;
}

/** The sample of `name` with exactly these labels (a counter's or gauge's value, as a number). */
function value(families: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  const sample = family(families, name).metrics.find((m) => JSON.stringify(m.labels ?? {}) === JSON.stringify(labels));
  return sample === undefined ? undefined : Number(sample.value ?? sample.count);
}

describe("GET /metrics", () => {
  it("answers 401 without a key and 403 to a key limited to a namespace, saying why", async () => {
    const none = await scrape();
    assert.equal(none.status, 401);
    const limited = await scrape(await createKey(server.dataDir, "--namespace", "alice"));
    assert.equal(limited.status, 403);
    assert.match(((await limited.json()) as { error: { message: string } }).error.message, /Only an unlimited API key may read \/metrics/);
  });

  it("counts runs by status, calls and their latency per source and tool, commits, host tasks, workers, webhook failures and the sandbox pool", async () => {
    const admin = server.client(adminKey);
    const families0 = await metrics();
    assert.equal(value(families0, "tapedeck_runs", { status: "completed" }), 0);
    assert.equal(value(families0, "tapedeck_webhook_delivery_failures_total", { gave_up: "false" }), undefined);
    // A webhook endpoint nobody listens at: the runs' events fail to be delivered.
    await admin.webhooks.create({ url: "http://127.0.0.1:9/hook" });
    const { id: toolset } = await admin.toolsets.create({ mcpServers: { fx: { url: mcp.url } } });
    const done = await admin.runs.start({
      toolset,
      source: `import { fx } from "tapedeck:tools";\nexport default async () => [await fx.echo({ text: "a" }), await fx.echo({ text: "b" })];`,
    });
    const waits = await admin.runs.start({ toolset, source: `export default async () => signal("go");` });
    assert.ok(done.kind === "started" && waits.kind === "started");
    assert.equal((await admin.runs.get(done.run.id, { wait: 30 })).status, "completed");
    assert.equal((await admin.runs.get(waits.run.id, { wait: 30 })).status, "waiting");
    await server.stderrLine((line) => line.includes("webhook delivery attempt failed"));

    const families = await metrics();
    assert.equal(family(families, "tapedeck_runs").type, "GAUGE");
    assert.deepEqual(Object.fromEntries(family(families, "tapedeck_runs").metrics.map((m) => [m.labels!.status, Number(m.value)])), {
      queued: 0,
      running: 0,
      waiting: 1,
      completed: 1,
      failed: 0,
      cancelled: 0,
    });
    assert.equal(family(families, "tapedeck_tool_calls_total").type, "COUNTER");
    assert.equal(value(families, "tapedeck_tool_calls_total", { source: "mcp", tool: "fx.echo", outcome: "ok" }), 2);
    const latency = family(families, "tapedeck_tool_call_duration_seconds");
    assert.equal(latency.type, "HISTOGRAM");
    // The parser merges a labelled histogram's series into one (and drops its labels, count and sum): this one has one series, fx.echo's.
    assert.equal(latency.metrics.length, 1);
    assert.equal(Number(latency.metrics[0]!.buckets!["+Inf"]), 2);
    assert.match(families.text, /^tapedeck_tool_call_duration_seconds_count\{source="mcp",tool="fx\.echo"\} 2$/m);
    const sum = /^tapedeck_tool_call_duration_seconds_sum\{source="mcp",tool="fx\.echo"\} (\S+)$/m.exec(families.text);
    assert.ok(sum !== null && Number(sum[1]) > 0, "the calls' time is summed");
    const commits = family(families, "tapedeck_journal_commit_duration_seconds").metrics[0]!;
    assert.ok(Number(commits.count) >= 4, `commits: ${commits.count}`);
    assert.ok(Number(commits.sum) > 0);
    assert.equal(value(families, "tapedeck_host_tasks", { state: "queued" }), 0);
    assert.equal(value(families, "tapedeck_host_tasks", { state: "claimed" }), 0);
    assert.equal(value(families, "tapedeck_workers_connected"), 0);
    assert.ok((value(families, "tapedeck_webhook_delivery_failures_total", { gave_up: "false" }) ?? 0) >= 1);
    assert.equal(value(families, "tapedeck_sandbox_workers"), 2);
    // The run is `waiting` once its park commits; its sandbox is given back just after: a scrape
    // answered in between counts it. Each scrape is a round trip, not a timer.
    let open = value(families, "tapedeck_sandboxes_open");
    for (const deadline = Date.now() + 10_000; open !== 0 && Date.now() < deadline;) open = value(await metrics(), "tapedeck_sandboxes_open");
    assert.equal(open, 0, "a waiting run holds no sandbox");
  });
});
