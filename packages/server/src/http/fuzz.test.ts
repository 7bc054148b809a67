import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * The API under fire: random methods, paths, query strings, credentials, content types and
 * bodies (malformed JSON, wrong types, unknown fields, deep nesting, huge bodies) against one
 * real server. Not one answer may be a 5xx, and the server must still work afterwards.
 */
let server: ServeChild;
let toolset: string;
let parkedRun: string;
let webhookToken: string;
let endpointId: string;

const HOST_MODULE = `export const w = { step: async (args: { n?: number }) => ({ n: args.n ?? 0 }) };`;
const TOOLSET = { hostTools: { w: { step: { description: "A step.", inputSchema: { type: "object" } } } }, policies: { "w.step": { approval: true } } };

before(async () => {
  server = await startServeChild({ hostModule: HOST_MODULE });
  const td = server.client(server.adminKey!);
  toolset = (await td.toolsets.create(TOOLSET)).id;
  const started = await td.runs.start({
    toolset,
    source: `import { w } from "tapedeck:tools";\nexport default async () => { const { url } = await webhook("hook"); console.log(url); await w.step({ n: 1 }); return signal("go"); };`,
  });
  parkedRun = started.kind === "started" ? started.run.id : assert.fail("refused");
  await td.runs.get(parkedRun, { wait: 30 });
  const log = (await td.runs.journal(parkedRun)).entries.find((e) => e.kind === "log");
  webhookToken = log?.kind === "log" ? log.message.split("/hooks/")[1]! : assert.fail("no webhook URL");
  // Port 9 (discard) on loopback refuses at once: deliveries fail fast, in the background.
  endpointId = (await td.webhooks.create({ url: "http://127.0.0.1:9/hook" })).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly auth: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string | undefined;
}

async function send(request: FuzzRequest): Promise<number> {
  const headers: Record<string, string> = {};
  if (request.auth !== undefined) headers.authorization = request.auth;
  if (request.contentType !== undefined) headers["content-type"] = request.contentType;
  const hasBody = request.body !== undefined && request.method !== "GET" && request.method !== "HEAD";
  // A poll that names no waitMs is held 30 s: the fuzz hangs up on it instead (a client gone mid-poll is a case too).
  const hangUp = request.path.startsWith("/v1/tasks/poll") ? { signal: AbortSignal.timeout(500) } : {};
  try {
    const response = await fetch(`${server.url}${request.path}${request.query}`, {
      method: request.method,
      headers,
      ...(hasBody ? { body: request.body } : {}),
      ...hangUp,
    });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError") return 0;
    throw error;
  }
}

/** Path segments: real ids (so handlers run), and junk. */
const segment = () =>
  fc.oneof(
    fc.constantFrom(
      parkedRun,
      toolset,
      webhookToken,
      endpointId,
      "task_missing",
      "run_missing",
      "1",
      "0",
      "-1",
      "1e3",
      "..",
      "%2e%2e",
      "%zz",
      "%00",
      "a".repeat(600),
    ),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
  );

const junkPath = () =>
  fc.oneof(
    fc.constantFrom(
      "/v1/toolsets",
      "/v1/check",
      "/v1/runs",
      "/v1/approvals",
      "/v1/tokens",
      "/v1/tasks/poll",
      "/v1/webhooks",
      "/v1/credentials",
      "/v1/credentials/rotate-key",
      "/health",
      "/ready",
      "/openapi.json",
      "/",
      "/v1",
      "/v2/runs",
      "//v1//runs",
    ),
    fc.tuple(fc.constantFrom("/v1/runs/", "/v1/toolsets/", "/hooks/", "/v1/webhooks/", "/v1/tasks/", "/v1/credentials/"), segment()).map(([a, b]) => a + b),
    fc.tuple(segment(), fc.constantFrom("/heartbeat", "/complete", "/fail")).map(([id, tail]) => `/v1/tasks/${id}${tail}`),
    segment().map((id) => `/v1/webhooks/${id}/deliveries`),
    fc
      .tuple(
        segment(),
        fc.constantFrom(
          "/journal",
          "/cancel",
          "/signal",
          "/fork",
          "/declarations",
          "/calls/1/approve",
          "/calls/x/reject",
          "/calls/99999999999999999999/approve",
        ),
      )
      .map(([id, tail]) => `/v1/runs/${id}${tail}`),
  );

const query = () =>
  fc.oneof(
    fc.constant(""),
    fc
      .array(
        fc.tuple(
          fc.constantFrom("wait", "limit", "from", "before", "status", "label.k", "label.", "namespace", "run", "toolset", "x", "__proto__"),
          fc.oneof(fc.constantFrom("1", "0", "61", "-1", "1.5", "abc", "", "waiting", "[]"), fc.string({ maxLength: 10 })),
        ),
        { maxLength: 4 },
      )
      .map((pairs) => `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}`),
  );

/** Each route with a body it accepts: the fuzz starts from these and breaks them. */
function routes(): readonly (readonly [string, string, Record<string, unknown> | undefined])[] {
  const run = `/v1/runs/${parkedRun}`;
  return [
    ["POST", "/v1/toolsets", TOOLSET],
    ["GET", `/v1/toolsets/${toolset}`, undefined],
    ["GET", `/v1/toolsets/${toolset}/declarations`, undefined],
    ["POST", "/v1/check", { toolset, source: "export default 1;" }],
    ["POST", "/v1/runs", { toolset, source: `import { w } from "tapedeck:tools"; export default async (n: number) => n;`, input: 1, labels: { k: "v" } }],
    ["GET", "/v1/runs", undefined],
    ["GET", run, undefined],
    ["GET", `${run}/journal`, undefined],
    ["POST", `${run}/signal`, { name: "go", payload: { ok: true }, idempotencyKey: "k" }],
    ["POST", `${run}/fork`, { source: "export default 2;", input: null }],
    ["POST", `${run}/calls/2/approve`, { reason: "ok" }],
    ["POST", `${run}/calls/2/reject`, {}],
    ["GET", "/v1/approvals", undefined],
    ["POST", "/v1/tokens", { namespace: "u1", labels: { a: "b" }, ttlSeconds: 60 }],
    ["POST", `/hooks/${webhookToken}`, { any: ["json"] }],
    ["POST", "/v1/tasks/poll", { tools: ["w.step", "other.*"], waitMs: 0, max: 2, toolset }],
    ["POST", "/v1/tasks/task_missing/heartbeat", { lease: "l" }],
    ["POST", "/v1/tasks/task_missing/complete", { lease: "l", result: { a: [1] } }],
    ["POST", "/v1/tasks/task_missing/fail", { lease: "l", error: { code: "c", message: "m", retryable: true, details: null } }],
    [
      "POST",
      "/v1/webhooks",
      { url: "http://127.0.0.1:9/other", events: ["run.completed", "run.failed"], namespace: "u1", labels: { a: "b" }, description: "d" },
    ],
    ["GET", "/v1/webhooks", undefined],
    ["GET", `/v1/webhooks/${endpointId}/deliveries`, undefined],
    ["DELETE", "/v1/webhooks/wh_missing", undefined],
    ["POST", "/v1/credentials", { name: "F", kind: "bearer", value: "fuzz_token", hosts: ["127.0.0.1", "*.example.com"], toolset }],
    ["POST", "/v1/credentials", { name: "G", kind: "basic", value: { username: "u", password: "p" }, hosts: ["example.com"], toolset, namespace: "u1" }],
    ["POST", "/v1/credentials", { name: "H", kind: "headers", value: { "X-Api-Key": "k" }, hosts: ["example.com"], run: parkedRun }],
    ["POST", "/v1/credentials", { name: "Q", kind: "query", value: { param: "key", value: "v" }, hosts: ["example.com"], toolset }],
    ["GET", "/v1/credentials", undefined],
    ["DELETE", `/v1/credentials/F?toolset=${toolset}`, undefined],
    ["DELETE", `/v1/credentials/H?run=${parkedRun}`, undefined],
    ["POST", "/v1/credentials/rotate-key", {}],
  ];
}

/** A valid body broken one way: a field dropped, retyped or added, or left as it is. */
const mutated = (valid: Record<string, unknown>) =>
  fc
    .oneof(
      fc.constant(valid),
      fc.constantFrom(...Object.keys(valid), "_").map((key) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key))),
      fc.tuple(fc.constantFrom(...Object.keys(valid), "unknownField"), fc.jsonValue({ maxDepth: 3 })).map(([key, value]) => ({ ...valid, [key]: value })),
    )
    .map((value) => JSON.stringify(value));

/** Anything at all as a body. */
const junkBody = () =>
  fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 50 }),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    fc.constantFrom("{", '{"a":}', "nul", "[1,]", '{"__proto__": {"admin": true}}', '{"constructor": {"prototype": {}}}', "\u0000", "1e999999"),
  );

const auth = () =>
  fc.constantFrom(
    `Bearer ${server.adminKey!}`,
    `Bearer ${server.adminKey!}`,
    `Bearer ${server.adminKey!}`,
    undefined,
    "Bearer tdt_e30.AAAA",
    "Basic abc",
    "Bearer",
    `bearer  ${server.adminKey!}`,
  );
const contentType = () =>
  fc.constantFrom(
    "application/json",
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    undefined,
  );

/** Mostly near-valid requests to real routes (so handlers and validation run), some anything. */
const request = (): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(...routes()).chain(([method, path, valid]) =>
        fc.record({
          method: fc.constant(method),
          path: fc.constant(path),
          query: query(),
          auth: auth(),
          contentType: fc.constantFrom("application/json", "application/json", "application/json", "text/plain", undefined),
          body: valid ? mutated(valid) : fc.constant(undefined),
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
        path: junkPath(),
        query: query(),
        auth: auth(),
        contentType: contentType(),
        body: junkBody(),
      }),
    },
  );

describe("API fuzz", () => {
  it("random requests never get a 5xx", { timeout: 120_000 }, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request(), async (req) => {
        const status = await send(req);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        assert.ok(status < 500, `${req.method} ${req.path}${req.query} (${req.contentType}) ${req.body?.slice(0, 200)} → ${status}`);
      }),
      { numRuns: 400 },
    );
    assert.ok(
      (statuses.get(400) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0 && (statuses.get(200) ?? 0) + (statuses.get(201) ?? 0) > 0,
      `a spread of answers: ${JSON.stringify([...statuses])}`,
    );
  });

  it("huge bodies are 413 with a clear message, deep nesting and malformed JSON are 400; never a 5xx", async () => {
    const auth = { authorization: `Bearer ${server.adminKey!}`, "content-type": "application/json" };
    const huge = JSON.stringify({ toolset, source: "export default 1;", input: "x".repeat(5 * 1024 * 1024) });
    for (const target of ["/v1/runs", `/hooks/${webhookToken}`, "/v1/toolsets"]) {
      const response = await fetch(`${server.url}${target}`, { method: "POST", headers: auth, body: huge });
      const answer = (await response.json()) as { error: { code: string; message: string } };
      assert.deepEqual([response.status, answer.error.code], [413, "payload_too_large"], target);
      assert.match(answer.error.message, /larger than 4194304 bytes/);
    }
    const deep = `{"toolset":"${toolset}","source":"export default 1;","input":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    for (const [target, text] of [
      ["/v1/runs", deep],
      [`/hooks/${webhookToken}`, "[".repeat(300) + "]".repeat(300)],
      [`/v1/runs/${parkedRun}/signal`, `{"name":"go","payload":${'{"a":'.repeat(1000)}1${"}".repeat(1000)}}`],
    ] as const) {
      const response = await fetch(`${server.url}${target}`, { method: "POST", headers: auth, body: text });
      assert.equal(response.status, 400, target);
      assert.match(((await response.json()) as { error: { message: string } }).error.message, /more than 256 levels deep/);
    }
    const malformed = await fetch(`${server.url}/v1/runs`, { method: "POST", headers: auth, body: '{"toolset": ' });
    assert.deepEqual([malformed.status, ((await malformed.json()) as { error: { code: string } }).error.code], [400, "invalid_json"]);
  });

  it("the server is healthy afterwards and still runs scripts", async () => {
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    const td = server.client(server.adminKey!);
    const started = await td.runs.start({ toolset, source: `export default (x: number) => x * 2;`, input: 21 });
    const run = started.kind === "started" ? await td.runs.get(started.run.id, { wait: 30 }) : assert.fail("refused");
    assert.deepEqual([run.status, run.output], ["completed", 42]);
    assert.doesNotMatch(server.stderr(), /failed while answering|Tapedeck failed|\n\s+at /, "no fault was logged");
  });
});
