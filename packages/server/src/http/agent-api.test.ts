import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Run, StartResult, Tapedeck, ToolsetSpec } from "@tapedeck/sdk";
import { failure } from "./test-support/failure.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * What the agent tools call, through the SDK against a real `tapedeck serve`: idempotent starts
 * and forks, a run's output page by page, one journal entry, tests over the API, tool search,
 * and TTLs (an expired run is cancelled by the server's sweeper, here at its next start).
 */
const HOST_MODULE = `
export const shop = { price: async ({ sku }: { sku: string }) => ({ sku, cents: sku.length * 100 }) };
export const slack = { post_message: async () => "ok" };
export const github = { create_issue: async () => 1, list_pull_requests: async () => [] };`;

const TOOLSET: ToolsetSpec = {
  hostTools: {
    shop: {
      price: {
        description: "The price of a product, in cents.",
        inputSchema: {
          type: "object",
          properties: { sku: { type: "string", description: "The product's stock keeping unit." } },
          required: ["sku"],
          additionalProperties: false,
        },
        outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "integer" } }, required: ["sku", "cents"] },
      },
    },
    slack: {
      post_message: {
        description: "Posts a message to a Slack channel.",
        inputSchema: { type: "object", properties: { channel: { type: "string" }, text: { type: "string" } } },
      },
    },
    github: {
      create_issue: {
        description: "Opens an issue in a repository.",
        inputSchema: { type: "object", properties: { repo: { type: "string" }, title: { type: "string" } } },
      },
      list_pull_requests: {
        description: "Lists the pull requests of a repository.",
        inputSchema: { type: "object", properties: { repo: { type: "string" } } },
      },
    },
  },
};

const HEADER = `import { shop } from "tapedeck:tools";\n`;
const WAITING = `export default async () => signal("go");`;

let server: ServeChild;
let adminKey: string;
let td: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild({ hostModule: HOST_MODULE });
  adminKey = server.adminKey!;
  td = server.client(adminKey);
  toolset = (await td.toolsets.create(TOOLSET)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

function runOf(started: StartResult): Run & { readonly existing: boolean } {
  if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
  return { ...started.run, existing: started.existing };
}

async function start(
  client: Tapedeck,
  source: string,
  options: { idempotencyKey?: string; ttl?: string | number; labels?: Record<string, string> } = {},
): Promise<Run & { readonly existing: boolean }> {
  return runOf(await client.runs.start({ toolset, source, ...options }));
}

async function completed(source: string): Promise<Run> {
  const run = await start(td, HEADER + source);
  const done = await td.runs.get(run.id, { wait: 30 });
  assert.equal(done.status, "completed", JSON.stringify(done.error));
  return done;
}

async function rejected(call: Promise<unknown>, status: number, code: string, message?: RegExp | string): Promise<void> {
  const error = await failure(call);
  assert.deepEqual([error.status, error.code], [status, code], error.message);
  if (typeof message === "string") assert.equal(error.message, message);
  else if (message) assert.match(error.message, message);
}

describe("the OpenAPI document", () => {
  it("describes the new routes, from the schemas that validate them", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses?: Record<string, unknown> }>>;
    };
    for (const path of ["/v1/runs/{id}/output", "/v1/runs/{id}/journal/{index}", "/v1/test", "/v1/toolsets/{id}/search"])
      assert.ok(doc.paths[path], `${path} is documented`);
    assert.ok(doc.paths["/v1/test"]!.post!.requestBody);
    assert.ok(doc.paths["/v1/runs"]!.post!.responses!["200"] && doc.paths["/v1/runs"]!.post!.responses!["201"], "a start documents both answers");
  });
});

describe("idempotent starts", () => {
  it("a repeated key starts nothing and answers the first run (200, existing); other namespaces keep their own keys", async () => {
    const first = await start(td, WAITING, { idempotencyKey: "call_1", labels: { conversation: "idem" } });
    assert.equal(first.existing, false);
    const again = await start(td, `export default () => "another script";`, { idempotencyKey: "call_1", labels: { conversation: "idem" } });
    assert.deepEqual([again.id, again.existing, again.source], [first.id, true, WAITING]);
    assert.deepEqual(
      (await td.runs.list({ labels: { conversation: "idem" } })).map((r) => r.id),
      [first.id],
    );
    const alice = await start(td.namespace("alice"), WAITING, { idempotencyKey: "call_1" });
    assert.notEqual(alice.id, first.id);
    assert.deepEqual([alice.existing, alice.namespace], [false, "alice"]);
    assert.equal((await start(td.namespace("alice"), WAITING, { idempotencyKey: "call_1" })).id, alice.id);

    const raw = (key: string) =>
      fetch(`${server.url}/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ toolset, source: WAITING, idempotencyKey: key }),
      });
    const created = await raw("call_raw");
    const repeated = await raw("call_raw");
    assert.deepEqual([created.status, repeated.status], [201, 200]);
    const [a, b] = (await Promise.all([created.json(), repeated.json()])) as [{ run: Run; existing: boolean }, { run: Run; existing: boolean }];
    assert.deepEqual([a.existing, b.existing, b.run.id], [false, true, a.run.id]);
  });

  it("concurrent starts with one key make one run; every one answers it", async () => {
    const runs = await Promise.all(Array.from({ length: 6 }, () => start(td, WAITING, { idempotencyKey: "race" })));
    assert.equal(new Set(runs.map((r) => r.id)).size, 1);
    assert.equal(runs.filter((r) => !r.existing).length, 1);
  });

  it("forks take keys too (one key space with starts, in the parent's namespace)", async () => {
    const parent = await start(td, WAITING);
    const fork = runOf(await td.runs.fork(parent.id, { source: WAITING, idempotencyKey: "retry_1" }));
    const again = runOf(await td.runs.fork(parent.id, { source: `export default () => 2;`, idempotencyKey: "retry_1" }));
    assert.deepEqual([fork.existing, again.existing, again.id, again.parent], [false, true, fork.id, parent.id]);
    assert.equal((await start(td, WAITING, { idempotencyKey: "retry_1" })).id, fork.id);
  });

  it("a key another tenant used answers 409 without naming the run; malformed keys are 400", async () => {
    const red = server.client(await createKey(server.dataDir, "--label", "team=red"));
    const blue = server.client(await createKey(server.dataDir, "--label", "team=blue"));
    const redRun = await start(red, WAITING, { idempotencyKey: "shared" });
    assert.equal((await start(red, WAITING, { idempotencyKey: "shared" })).id, redRun.id);
    const error = await failure(blue.runs.start({ toolset, source: WAITING, idempotencyKey: "shared" }));
    assert.deepEqual([error.status, error.code], [409, "conflict"]);
    assert.ok(!error.message.includes(redRun.id));
    await rejected(td.runs.start({ toolset, source: WAITING, idempotencyKey: "" }), 400, "invalid_request", /body\.idempotencyKey/);
    await rejected(
      td.runs.start({ toolset, source: WAITING, idempotencyKey: "k".repeat(201) }),
      400,
      "invalid_request",
      /body\.idempotencyKey must NOT have more than 200 characters/,
    );
  });
});

describe("a run's output, page by page", () => {
  it("pages of the 2-space JSON text reassemble it; the default page holds a small output whole", async () => {
    const done = await completed(`export default () => Array.from({ length: 3000 }, (_, i) => ({ i, s: "é" + i }));`);
    const text = JSON.stringify(done.output, null, 2);
    const whole = await td.runs.output(done.id);
    assert.deepEqual(whole, { text, offset: 0, total: text.length });
    let read = "";
    for (let offset: number | undefined = 0; offset !== undefined;) {
      const page = await td.runs.output(done.id, { offset, limit: 10_000 });
      assert.equal(page.offset, offset);
      assert.equal(page.total, text.length);
      read += page.text;
      offset = page.nextOffset;
    }
    assert.equal(read, text);
    assert.deepEqual(await td.runs.output(done.id, { offset: text.length }), { text: "", offset: text.length, total: text.length });
    await rejected(td.runs.output(done.id, { offset: text.length + 1 }), 400, "invalid_request", /past the end/);
    await rejected(td.runs.output(done.id, { limit: 1024 * 1024 + 1 }), 400, "invalid_request", /querystring\.limit/);
  });

  it("a page never ends inside a surrogate pair, and always moves on", async () => {
    const done = await completed(`export default () => "🎉a🎉";`);
    for (const limit of [1, 2, 3]) {
      const pages: string[] = [];
      for (let offset: number | undefined = 0; offset !== undefined; offset = (await td.runs.output(done.id, { offset, limit })).nextOffset) {
        pages.push((await td.runs.output(done.id, { offset, limit })).text);
      }
      assert.equal(pages.join(""), `"🎉a🎉"`, `limit ${limit}`);
      assert.ok(
        pages.every((page) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(page)),
        `limit ${limit}: ${JSON.stringify(pages)}`,
      );
    }
  });

  it("no output yet (or ever) is 409; a run outside the scope is the 404 of a missing run", async () => {
    const waiting = await start(td, WAITING);
    assert.equal((await td.runs.get(waiting.id, { wait: 30 })).status, "waiting");
    await rejected(td.runs.output(waiting.id), 409, "conflict", /has no output yet: it is waiting/);
    const failed = await start(td, `export default () => { throw new Error("no"); };`);
    assert.equal((await td.runs.get(failed.id, { wait: 30 })).status, "failed");
    await rejected(td.runs.output(failed.id), 409, "conflict", /ended failed/);
    const done = await completed(`export default () => 1;`);
    await rejected(td.namespace("alice").runs.output(done.id), 404, "not_found", `No run ${done.id}.`);
    await rejected(td.runs.output("run_missing"), 404, "not_found", "No run run_missing.");
  });
});

describe("one journal entry", () => {
  it("in full by index; past the end a 404 that says how long the journal is; out of scope as missing", async () => {
    const done = await completed(`export default async () => (await shop.price({ sku: "abc" })).cents;`);
    const { entries } = await td.runs.journal(done.id);
    assert.equal(entries.length, done.journalLength);
    for (const expected of entries) assert.deepEqual(await td.runs.entry(done.id, expected.index), expected);
    await rejected(
      td.runs.entry(done.id, done.journalLength),
      404,
      "not_found",
      `Run ${done.id} has no journal entry ${done.journalLength}: its journal has ${done.journalLength} entries (0 to ${done.journalLength - 1}).`,
    );
    await rejected(td.runs.entry(done.id, -1), 400, "invalid_request", /params\.index/);
    await rejected(td.namespace("alice").runs.entry(done.id, 0), 404, "not_found", `No run ${done.id}.`);
  });
});

describe("tests over the API", () => {
  const PRICE = `${HEADER}export default async () => { await sleep("10d"); return (await shop.price({ sku: "abc" })).cents; };`;

  it("runs against mocks in virtual time; nothing is sent and no run is kept", async () => {
    const before = await td.runs.list({ limit: 500 });
    const result = await td.test({ toolset, source: PRICE, scenario: { tools: { "shop.price": { result: { sku: "abc", cents: 7 } } } } });
    assert.equal(result.kind, "tested");
    if (result.kind !== "tested") return;
    assert.deepEqual([result.status, result.output], ["completed", 7]);
    assert.ok(result.virtualMs >= 10 * 86_400_000);
    assert.deepEqual(
      result.calls.map((c) => [c.tool, c.answeredBy]),
      [
        ["tapedeck.sleep", "builtin"],
        ["shop.price", "mock"],
      ],
    );
    assert.ok(!("runId" in result), "the throwaway test run's id is not shown");
    assert.deepEqual(
      (await td.runs.list({ limit: 500 })).map((r) => r.id),
      before.map((r) => r.id),
    );
  });

  it("from_run answers calls from what the run recorded; a run outside the scope is the 404 of a missing one", async () => {
    const recorded = await completed(`export default async () => (await shop.price({ sku: "abcd" })).cents;`);
    const result = await td.test({
      toolset,
      source: `${HEADER}export default async () => (await shop.price({ sku: "abcd" })).cents * 2;`,
      scenario: { from_run: recorded.id },
    });
    assert.deepEqual(result.kind === "tested" && [result.status, result.output, result.calls[0]?.answeredBy], ["completed", 800, "recorded"]);
    const alice = td.namespace("alice");
    await rejected(alice.test({ toolset, source: PRICE, scenario: { from_run: recorded.id } }), 404, "not_found", `No run ${recorded.id}.`);
    await rejected(alice.test({ toolset, source: PRICE, scenario: { from_run: "run_missing" } }), 404, "not_found", "No run run_missing.");
  });

  it("a refused script gives the diagnostics; a bad scenario or body is 400; an unknown toolset 404", async () => {
    const refused = await td.test({ toolset, source: `${HEADER}export default () => shop.nope();` });
    assert.equal(refused.kind, "refused");
    assert.match(refused.kind === "refused" ? (refused.diagnostics[0]?.message ?? "") : "", /nope/);
    await rejected(
      td.test({ toolset, source: PRICE, scenario: { tools: { price: {} } } }),
      400,
      "invalid_request",
      /The test scenario is invalid: tools\["price"\]/,
    );
    await rejected(td.test({ toolset, source: PRICE, scenario: [] as never }), 400, "invalid_request", "body.scenario must be an object.");
    await rejected(td.test({ toolset: "ts_missing", source: PRICE }), 404, "not_found");
  });
});

describe("tool search", () => {
  it("the best matches with their declarations; blank queries and bad limits are 400; unknown toolsets 404", async () => {
    const hits = await td.toolsets.search(toolset, "send a message to a slack channel");
    assert.equal(hits[0]?.tool, "slack.post_message");
    assert.equal(hits[0]?.group, "slack");
    assert.match(hits[0]?.declaration ?? "", /post_message\(/);
    assert.ok(hits.every((hit, i) => i === 0 || hit.score <= hits[i - 1]!.score));
    assert.equal((await td.toolsets.search(toolset, "repository", { limit: 1 })).length, 1);
    assert.deepEqual(await td.toolsets.search(toolset, "zzzzqqqq"), []);
    await rejected(td.toolsets.search(toolset, "  "), 400, "invalid_request", /search_tools needs words to search for/);
    await rejected(td.toolsets.search(toolset, "x", { limit: 51 }), 400, "invalid_request", /querystring\.limit/);
    await rejected(td.toolsets.search("ts_missing", "slack"), 404, "not_found");
  });
});

describe("declarations of tools that need approval", () => {
  it("the prompt line and the JSDoc (also in search hits) say a call waits for a person", async () => {
    const spec: ToolsetSpec = { ...TOOLSET, policies: { "github.create_issue": { approval: true } } };
    const registered = await td.toolsets.create(spec);
    const line = registered.declarations.prompt.split("\n").find((l) => l.startsWith("github.create_issue("));
    assert.match(
      line ?? "",
      /^github\.create_issue\(.*\) → unknown · Needs a person's approval: each call waits for it \(the run holds nothing meanwhile\) · Opens an issue in a repository\.$/,
    );
    for (const other of registered.declarations.prompt.split("\n").filter((l) => l.startsWith("github.list_pull_requests(") || l.startsWith("shop.price("))) {
      assert.doesNotMatch(other, /approval/, "tools without approval say nothing of it");
    }
    assert.match(
      registered.declarations.typescript,
      /\* Opens an issue in a repository\.\n\s+\*\n\s+\* @approval Each call waits for a person to approve it before it is sent/,
    );
    const [hit] = await td.toolsets.search(registered.id, "open an issue in a repository", { limit: 1 });
    assert.equal(hit?.tool, "github.create_issue");
    assert.match(hit?.declaration ?? "", /@approval Each call waits for a person/);
  });
});

describe("TTLs", () => {
  it("a ttl sets expiresAt; a fork keeps its parent's unless given; malformed ones are 400", async () => {
    const run = await start(td, WAITING, { ttl: "30d" });
    assert.equal(run.expiresAt! - run.createdAt, 30 * 86_400_000);
    assert.equal((await start(td, WAITING, { ttl: 90_000 })).expiresAt! - Date.now() <= 90_000, true);
    const fork = runOf(await td.runs.fork(run.id, { source: WAITING }));
    assert.equal(fork.expiresAt! - fork.createdAt, 30 * 86_400_000);
    const shorter = runOf(await td.runs.fork(run.id, { source: WAITING, ttl: "2h" }));
    assert.equal(shorter.expiresAt! - shorter.createdAt, 2 * 3_600_000);
    assert.equal((await start(td, WAITING)).expiresAt, undefined);
    await rejected(td.runs.start({ toolset, source: WAITING, ttl: "soon" }), 400, "invalid_request", /body\.ttl "soon" is not a duration/);
    await rejected(td.runs.start({ toolset, source: WAITING, ttl: 0 }), 400, "invalid_request", /body\.ttl/);
    await rejected(td.runs.start({ toolset, source: WAITING, ttl: "3651d" }), 400, "invalid_request", /at most 3650d/);
    await rejected(td.runs.start({ toolset, source: WAITING, ttl: true as never }), 400, "invalid_request", "body.ttl must be a string or an integer.");
  });

  it("a run whose ttl passed while the server was down is cancelled when it starts again", async () => {
    const expiring = await start(td, WAITING, { ttl: 1 });
    const kept = await start(td, WAITING, { ttl: "1h" });
    for (const run of [expiring, kept]) assert.equal((await td.runs.get(run.id, { wait: 30 })).status, "waiting");
    assert.equal(await server.stop(), 0, server.stderr());
    server = await startServeChild({ dataDir: server.dataDir, hostModule: HOST_MODULE });
    td = server.client(adminKey);
    let status = "";
    for (let tries = 0; tries < 100 && status !== "cancelled"; tries++) {
      status = (await td.runs.get(expiring.id)).status;
      if (status !== "cancelled") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, "cancelled");
    const { entries } = await td.runs.journal(expiring.id, { from: (await td.runs.get(expiring.id)).journalLength - 1 });
    assert.deepEqual(
      entries.map((e) => e.kind === "run.cancelled" && e.reason),
      ["expired: its ttl of 1ms passed"],
    );
    assert.equal((await td.runs.get(kept.id, { wait: 30 })).status, "waiting");
  });
});

describe("malformed requests to these routes", () => {
  it("are 4xx that say what is wrong, never 5xx", async () => {
    const done = await completed(`export default () => ({ ok: true });`);
    const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; message: string }> => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, message: ((await response.json()) as { error?: { message: string } }).error?.message ?? "" };
    };
    const requests: [string, string, unknown?][] = [
      ["GET", `/v1/runs/${done.id}/output?offset=-1`],
      ["GET", `/v1/runs/${done.id}/output?offset=1.5`],
      ["GET", `/v1/runs/${done.id}/output?limit=abc`],
      ["GET", `/v1/runs/${done.id}/output?limit=0`],
      ["GET", `/v1/runs/${done.id}/output?offset=99999999999999999999`],
      ["GET", `/v1/runs/${done.id}/output?other=1`],
      ["GET", `/v1/runs/${done.id}/journal/abc`],
      ["GET", `/v1/runs/${done.id}/journal/1.5`],
      ["GET", `/v1/runs/${done.id}/journal/99999999999999999999`],
      ["GET", `/v1/toolsets/${toolset}/search`],
      ["GET", `/v1/toolsets/${toolset}/search?q=a&limit=0`],
      ["GET", `/v1/toolsets/${toolset}/search?q=${"a".repeat(1001)}`],
      ["GET", `/v1/toolsets/${toolset}/search?q=${encodeURIComponent("?!.")}`],
      ["POST", "/v1/test", {}],
      ["POST", "/v1/test", { toolset: 1, source: "x" }],
      ["POST", "/v1/test", { toolset, source: "x", scenario: "x" }],
      ["POST", "/v1/test", { toolset, source: "x", scenario: { from_run: 5 } }],
      ["POST", "/v1/test", { toolset, source: "x", scenario: { from_run: "" } }],
      ["POST", "/v1/test", { toolset, source: "x", scenario: { tools: null } }],
      ["POST", "/v1/test", { toolset, source: "x", scenario: { signals: [{ name: "go", at: "later" }] } }],
      ["POST", "/v1/test", { toolset, source: "x", extra: 1 }],
      ["POST", "/v1/runs", { toolset, source: WAITING, ttl: "9".repeat(60) + "y" }],
      ["POST", "/v1/runs", { toolset, source: WAITING, ttl: "1.5" }],
      ["POST", "/v1/runs", { toolset, source: WAITING, ttl: -5 }],
      ["POST", "/v1/runs", { toolset, source: WAITING, ttl: 1.5 }],
      ["POST", "/v1/runs", { toolset, source: WAITING, idempotencyKey: 5 }],
      ["POST", `/v1/runs/${done.id}/fork`, { source: WAITING, ttl: "x" }],
      ["POST", `/v1/runs/${done.id}/fork`, { source: WAITING, idempotencyKey: null }],
    ];
    for (const [method, path, body] of requests) {
      const { status, message } = await send(method, path, body);
      assert.ok(status >= 400 && status < 500, `${method} ${path} ${JSON.stringify(body)} answered ${status}: ${message}`);
      assert.notEqual(message, "", `${method} ${path} says what is wrong`);
    }
  });
});
