import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { statSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../cli/cli.js";
import { TEST_ALLOW_LOOPBACK_ENV, TEST_RETRY_BASE_ENV, TEST_WORKER_LOST_ENV } from "../cli/commands/serve.js";
import { capture } from "../cli/test-support/in-process.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { startReceiver, type WebhookReceiver } from "./test-support/webhook-receiver.js";

/**
 * The server's log, from a real `tapedeck serve --log-format json`: one line per request (no
 * body, header, query string or webhook token), runs started, parked and ended, workers
 * connected and lost, webhook attempts that failed; every line JSON; and nothing secret in any
 * of it: keys, the run-bound webhook URL's token, a token in a query string, the secret path of
 * a webhook endpoint, what bodies carried.
 */
const BODY_MARKER = "log_body_marker_6e1f0c";
const QUERY_SECRET = "log_query_secret_9a2d77";
const RECEIVER_PATH = "receiver_secret_path_41be";

const TOOLSET = { hostTools: { shop: { price: { description: `A price. ${BODY_MARKER}`, inputSchema: { type: "object" } } } } };
const SCRIPT = `import { shop } from "tapedeck:tools";
export default async (input: unknown) => {
  const { url } = await webhook("paid");
  console.log(url);
  const paid = await signal("paid");
  return { input, paid, price: await shop.price({ sku: "a" }) };
};`;

type LogLine = Readonly<Record<string, unknown>> & { readonly msg: string };

let server: ServeChild;
let admin: Tapedeck;
let workerKey: string;
let receiver: WebhookReceiver;

before(async () => {
  receiver = await startReceiver(() => 500);
  server = await startServeChild({ args: ["--log-format", "json"], env: { [TEST_RETRY_BASE_ENV]: "60000", [TEST_WORKER_LOST_ENV]: "300" } });
  admin = server.client(server.adminKey!);
  workerKey = await createKey(server.dataDir);
});

after(async () => {
  await server.stop();
  await receiver.close();
  server.cleanup();
});

/** Every line `node` wrote on stderr, each of which must be a JSON object (`--log-format json`: nothing else goes on the stream). */
function jsonLines(node: ServeChild): LogLine[] {
  return node
    .stderr()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        return assert.fail(`a line of the JSON log is not JSON: ${line}`);
      }
    });
}

function logLines(): LogLine[] {
  return jsonLines(server);
}

/** The first log line with this message whose fields include `fields`, once it is written. */
async function logged(msg: string, fields: Readonly<Record<string, unknown>> = {}): Promise<LogLine> {
  const matches = (line: string): boolean => {
    if (!line.startsWith("{")) return false;
    const entry = JSON.parse(line) as LogLine;
    return entry.msg === msg && Object.entries(fields).every(([key, value]) => JSON.stringify(entry[key]) === JSON.stringify(value));
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no log line ${JSON.stringify({ msg, ...fields })} within ${LOG_DEADLINE_MS} ms; the log:\n${server.stderr()}`)),
      LOG_DEADLINE_MS,
    );
  });
  try {
    return JSON.parse(await Promise.race([server.stderrLine(matches), deadline])) as LogLine;
  } finally {
    clearTimeout(timer);
  }
}

/** Far longer than any of these takes (the worker is lost after 300 ms of silence): a line not there by then will not come. */
const LOG_DEADLINE_MS = 15_000;

describe("the server's log", () => {
  it("says what happened to requests, runs, workers and webhooks, in JSON lines with nothing secret", async () => {
    const endpoint = await admin.webhooks.create({ url: `${receiver.url}/${RECEIVER_PATH}`, events: ["run.completed"] });
    const { id: toolset } = await admin.toolsets.create(TOOLSET);
    await admin.toolsets.get(toolset);
    const started = await admin.runs.start({ toolset, source: SCRIPT, input: { marker: BODY_MARKER } });
    if (started.kind !== "started") return assert.fail("refused");
    const runId = started.run.id;
    assert.equal((await admin.runs.get(runId, { wait: 30 })).status, "waiting");
    const journal = await admin.runs.journal(runId);
    const logEntry = journal.entries.find((e) => e.kind === "log");
    const hookUrl = logEntry?.kind === "log" ? logEntry.message : "";
    assert.match(hookUrl, /^http:\/\/127\.0\.0\.1:\d+\/hooks\/\S+$/, "the run logged its webhook URL");
    const hookToken = hookUrl.split("/hooks/")[1]!;
    const unauthorized = await fetch(`${server.url}/v1/runs?limit=1&token=${QUERY_SECRET}`, { headers: { authorization: `Bearer tdk_${QUERY_SECRET}` } });
    assert.equal(unauthorized.status, 401);
    const hooked = await fetch(hookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ marker: BODY_MARKER }) });
    assert.equal(hooked.status, 200);

    const worker = server
      .client(workerKey)
      .worker({ tools: { shop: { price: () => ({ cents: 100 }) } } })
      .start();
    assert.equal((await admin.runs.get(runId, { wait: 30 })).status, "completed");
    await worker.stop();

    // Started with two test-only switches: the log said so at start, and /health says so.
    const unsafe = await logged(
      "UNSAFE: started with test-only switches (never run a production server so; GET /health lists them): " +
        `${TEST_RETRY_BASE_ENV}=60000: webhook retries start after this many ms instead of 10 s (receivers would be hammered); ${TEST_WORKER_LOST_ENV}=300: a silent worker is logged as lost after this many ms instead of 60 s`,
    );
    assert.equal(unsafe.level, 40);
    const health = (await (await fetch(`${server.url}/health`)).json()) as { status: string; unsafe?: string[] };
    assert.deepEqual([health.status, health.unsafe?.map((text) => text.split("=")[0])], ["ok", [TEST_RETRY_BASE_ENV, TEST_WORKER_LOST_ENV]]);

    // Each thing, once it has happened.
    assert.deepEqual((await logged("run started", { runId })).toolset, toolset);
    assert.deepEqual((await logged("run parked", { runId })).waits, ['signal "paid"']);
    assert.equal((await logged("run ended", { runId })).status, "completed");
    assert.deepEqual((await logged("worker connected", { tools: ["shop.price"] })).toolset, undefined);
    assert.equal(typeof (await logged("worker lost", { tools: ["shop.price"] })).silentMs, "number", "how long it was silent");
    const attempt = await logged("webhook delivery attempt failed", { endpoint: endpoint.id });
    assert.deepEqual([attempt.status, attempt.attempt, attempt.type], [500, 1, "run.completed"]);
    await logged("request", { method: "POST", path: "/hooks/[redacted]", status: 200 });
    await logged("request", { method: "GET", path: "/v1/runs", status: 401 });
    const read = await logged("request", { method: "GET", path: `/v1/toolsets/${toolset}` });
    assert.deepEqual([read.status, read.caller], [200, (await logged("request", { path: "/v1/toolsets" })).caller]);

    // Every line looked for is written; a graceful stop writes the rest.
    assert.equal(await server.stop(), 0);
    const lines = logLines();
    assert.equal(lines.filter((l) => l.msg === "request" && l.path === `/v1/toolsets/${toolset}`).length, 1, "one line per request");
    const text = lines.map((l) => JSON.stringify(l)).join("\n");
    const secrets = { adminKey: server.adminKey!, workerKey, hookToken, QUERY_SECRET, RECEIVER_PATH, BODY_MARKER, endpointSecret: endpoint.secret };
    for (const [name, secret] of Object.entries(secrets)) assert.ok(!text.includes(secret), `the log holds ${name}`);
    assert.ok(!/authorization|bearer/i.test(text), "no header is logged");
    assert.ok(text.includes(runId) && text.includes(toolset), "control: the scan reads the log");
    assert.deepEqual(
      lines.filter((l) => (l.level as number) < 30),
      [],
      "at info, nothing below info",
    );
    assert.equal(lines.at(-1)?.msg, "stopping: runs stay intact and go on at the next start", "the stop is a log line too");
  });
});

describe("log options", () => {
  it("--log-level trace logs more than info (requests as they arrive, store probes, worker polls); with --log-format json every line is JSON, Node's warnings and the stop included, and the admin key is never in it", async () => {
    // A host module that raises a Node warning as it loads: the warning must come out as a log line.
    const hostModule = `process.emitWarning("a host module's own warning", "TestWarning");\nexport const shop = { price: async () => ({ cents: 100 }) };\n`;
    const traced = await startServeChild({ args: ["--log-format", "json", "--log-level", "trace"], hostModule });
    try {
      const td = traced.client(traced.adminKey!);
      await td.runs.list();
      const worker = td.worker({ tools: { mail: { send: () => "sent" } } }).start();
      await traced.stderrLine((line) => line.includes('"msg":"worker polls"'));
      await worker.stop();
      await traced.stderrLine((line) => line.includes('"msg":"request received"') && line.includes('"path":"/v1/runs"'));
      await traced.stderrLine((line) => line.includes('"msg":"store probed"'));
      assert.deepEqual(await (await fetch(`${traced.url}/health`)).json(), { status: "ok" }, "no switch on: /health says nothing of them");
      assert.equal(statSync(join(traced.dataDir, "admin-key")).mode & 0o777, 0o600, "the admin key's file is this user's alone");
    } finally {
      assert.equal(await traced.stop(), 0, traced.stderr());
      traced.cleanup();
    }
    const lines = jsonLines(traced);
    const levels = (msg: string): unknown[] => lines.filter((l) => l.msg === msg).map((l) => l.level);
    assert.deepEqual(levels("request received").slice(0, 1), [20], "a request's arrival, at debug");
    assert.deepEqual(levels("store probed").slice(0, 1), [10], "each store probe, at trace");
    assert.deepEqual(levels("worker polls").slice(0, 1), [10], "each worker poll, at trace");
    const warning = lines.find((l) => l.msg === "a host module's own warning");
    assert.deepEqual([warning?.level, warning?.warning], [40, "TestWarning"], "Node's warning is a log line");
    assert.equal(lines.find((l) => l.msg.startsWith("stopping"))?.signal, "SIGTERM");
    // The admin key: in a file of the data folder only this user reads, which the log names; never in the log.
    const notice = lines.find((l) => typeof l.file === "string");
    assert.equal(notice?.file, join(traced.dataDir, "admin-key"));
    assert.match(notice?.msg ?? "", /created the admin API key of the data folder .* and wrote it to .*admin-key \(mode 0600/);
    assert.ok(!traced.stderr().includes(traced.adminKey!), "the admin key is not in the log");
  });

  it("--log-format pretty prints a line for people; --log-level warn leaves requests out; a bad value is a usage error", async () => {
    const pretty = await startServeChild({ args: ["--log-format", "pretty"], env: { [TEST_ALLOW_LOOPBACK_ENV]: "1" } });
    try {
      // The loopback switch, said at start and by /health.
      await pretty.stderrLine((l) => / WARN {2}UNSAFE: started with test-only switches .*TAPEDECK_UNSAFE_TEST_HTTP_ALLOW_LOOPBACK=1/.test(l));
      const health = (await (await fetch(`${pretty.url}/health`)).json()) as { unsafe?: string[] };
      assert.match(
        health.unsafe?.join("\n") ?? "",
        /^unsafeHttpAllowLoopbackForTests \(TAPEDECK_UNSAFE_TEST_HTTP_ALLOW_LOOPBACK=1\): scripts' fetch may reach this machine's loopback addresses/,
      );
      assert.equal((await fetch(`${pretty.url}/v1/runs`)).status, 401);
      const line = await pretty.stderrLine((l) => / INFO {2}request .*path=\/v1\/runs/.test(l));
      assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}request reqId=\S+ method=GET path=\/v1\/runs status=401 ms=[\d.]+$/);
    } finally {
      await pretty.stop();
      pretty.cleanup();
    }

    const quiet = await startServeChild({ args: ["--log-level", "warn"] });
    try {
      assert.equal((await fetch(`${quiet.url}/v1/runs`)).status, 401);
    } finally {
      assert.equal(await quiet.stop(), 0, "stopped: its output is read to the end");
      quiet.cleanup();
    }
    assert.doesNotMatch(quiet.stderr(), /"msg":"request"|Server listening/);

    for (const args of [
      ["--log-level", "loud"],
      ["--log-format", "xml"],
    ]) {
      const io = capture();
      assert.equal(await cli(["serve", ...args, "--data", "/nonexistent/never"], io), 2);
      assert.match(io.err.join("\n"), /^--log-(level|format) must be one of/);
    }
    for (const [value, says] of [
      ["500", /^--lease-ms must be at least 1000 ms/],
      ["soon", /^--lease-ms must be a number of milliseconds, not "soon"/],
    ] as const) {
      const io = capture();
      assert.equal(await cli(["serve", "--lease-ms", value, "--data", "/nonexistent/never"], io), 2);
      assert.match(io.err.join("\n"), says);
    }
  });
});
