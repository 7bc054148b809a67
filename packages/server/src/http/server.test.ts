import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { run as runSchema } from "@tapedeck/protocol/api";
import { ApiErrorCode, RunStatus, TapedeckError, type JournalEntry, type Run, type Tapedeck, type ToolsetSpec } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * The HTTP API through the SDK, against one real `tapedeck serve` child process: toolsets,
 * checks, runs and their journals, signals, approvals, webhooks, cancel, fork, lists, errors.
 */
const HOST_MODULE = `
export const shop = {
  price: async ({ sku }: { sku: string }) => ({ sku, cents: sku.length * 100 }),
  merge: async ({ pr }: { pr: number }) => "merged " + pr,
};`;

const TOOLSET: ToolsetSpec = {
  hostTools: {
    shop: {
      price: {
        description: "A price.",
        inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"], additionalProperties: false },
        outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "integer" } }, required: ["sku", "cents"] },
      },
      merge: { description: "Merge a PR.", inputSchema: { type: "object", properties: { pr: { type: "integer" } }, required: ["pr"] } },
    },
  },
  policies: { "shop.merge": { approval: true } },
};

const HEADER = `import { shop } from "tapedeck:tools";\n`;

let server: ServeChild;
let td: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild({ hostModule: HOST_MODULE });
  td = server.client(server.adminKey!);
  toolset = (await td.toolsets.create(TOOLSET)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function start(source: string, options: { input?: number; labels?: Record<string, string> } = {}): Promise<Run> {
  const started = await td.runs.start({ toolset, source: HEADER + source, ...options });
  if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
  return started.run;
}

/** The run once it has ended or parked. */
const settled = (id: string): Promise<Run> => td.runs.get(id, { wait: 30 });

async function rejects(call: Promise<unknown>, status: number, code: string): Promise<TapedeckError> {
  try {
    await call;
  } catch (error) {
    assert.ok(TapedeckError.is(error), String(error));
    assert.deepEqual([error.status, error.code], [status, code], error.message);
    return error;
  }
  assert.fail(`expected ${status} ${code}`);
}

describe("HTTP API through the SDK", () => {
  it("health, readiness and the OpenAPI document (every route, generated from the schemas)", async () => {
    assert.deepEqual(await (await fetch(`${server.url}/health`)).json(), { status: "ok" });
    assert.deepEqual(await (await fetch(`${server.url}/ready`)).json(), { status: "ok" });
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    assert.equal(doc.openapi, "3.1.0");
    for (const path of [
      "/v1/toolsets",
      "/v1/toolsets/{id}",
      "/v1/check",
      "/v1/runs",
      "/v1/runs/{id}",
      "/v1/runs/{id}/journal",
      "/v1/runs/{id}/signal",
      "/v1/runs/{id}/calls/{seq}/approve",
      "/v1/approvals",
      "/v1/tokens",
      "/v1/tasks/poll",
      "/v1/tasks/{id}/heartbeat",
      "/v1/tasks/{id}/complete",
      "/v1/tasks/{id}/fail",
      "/v1/webhooks",
      "/v1/webhooks/{id}",
      "/v1/webhooks/{id}/deliveries",
      "/hooks/{token}",
    ]) {
      assert.ok(doc.paths[path], `${path} is documented`);
    }
    assert.ok(doc.paths["/v1/runs"]!.post!.requestBody, "request bodies come from the validating schemas");
  });

  it("the OpenAPI document's answers are the protocol's schemas: which fields are always there, which values a field takes", async () => {
    interface Shown {
      readonly required?: readonly string[];
      readonly enum?: readonly unknown[];
      readonly properties?: Record<string, Shown>;
    }
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Shown }> }> }>>;
    };
    const answer = (path: string, method: string, status: string): Shown => doc.paths[path]![method]!.responses[status]!.content["application/json"]!.schema;
    const run = answer("/v1/runs/{id}", "get", "200");
    assert.deepEqual(run.required, runSchema.required);
    assert.deepEqual(run.properties?.status?.enum, Object.values(RunStatus));
    assert.deepEqual(answer("/v1/runs", "get", "200").properties?.runs, { type: "array", items: run });
    assert.deepEqual(answer("/v1/runs/{id}", "get", "404").properties?.error?.properties?.code?.enum, Object.values(ApiErrorCode));
  });

  it("toolsets: registered content-addressed (same spec, same id), read back with declarations", async () => {
    const again = await td.toolsets.create(TOOLSET);
    assert.equal(again.id, toolset);
    assert.match(again.declarations.typescript, /price\(args: \{ sku: string \}\)/);
    assert.match(again.declarations.prompt, /shop\.merge/);
    assert.deepEqual(again.warnings, []);
    const info = await td.toolsets.get(toolset);
    assert.deepEqual(
      info.toolset.tools.map((t) => `${t.group}.${t.name}`),
      ["shop.merge", "shop.price"],
    );
    assert.deepEqual(await td.toolsets.declarations(toolset), again.declarations);
    await rejects(td.toolsets.get("ts_nope"), 404, "not_found");
    const invalid = await rejects(td.toolsets.create({ hostTools: { "bad-group": {} } }), 422, "invalid_toolset");
    assert.match(invalid.message, /bad-group/);
  });

  it("check: ok with warnings only, or the diagnostics with line and code frame", async () => {
    assert.deepEqual(await td.check({ toolset, source: `${HEADER}export default () => shop.price({ sku: "a" });` }), { ok: true, diagnostics: [] });
    const bad = await td.check({ toolset, source: `${HEADER}export default () => shop.price({ sku: 1 });` });
    assert.equal(bad.ok, false);
    assert.equal(bad.diagnostics[0]?.line, 2);
    assert.match(bad.diagnostics[0]?.frame ?? "", /sku: 1/);
  });

  it("a run round trip: refused scripts create nothing; a started run completes with host tools; its journal pages", async () => {
    const refused = await td.runs.start({ toolset, source: `${HEADER}export default () => shop.nope();` });
    assert.equal(refused.kind, "refused");
    const run = await start(
      `export default async (input: number) => { console.log("go"); const [a, b] = await Promise.all([shop.price({ sku: "ab" }), shop.price({ sku: "abc" })]); return a.cents + b.cents + input; };`,
      { input: 1 },
    );
    assert.equal(run.toolset, toolset);
    const done = await settled(run.id);
    assert.equal(done.status, "completed");
    assert.equal(done.output, 501);
    const entries: JournalEntry[] = [];
    for (let from: number | undefined = 0; from !== undefined;) {
      const page = await td.runs.journal(run.id, { from, limit: 2 });
      entries.push(...page.entries);
      from = page.next;
    }
    assert.equal(entries.length, done.journalLength);
    assert.deepEqual(
      entries.map((e) => e.index),
      entries.map((_, i) => i),
    );
    assert.equal(entries.at(-1)?.kind, "run.completed");
  });

  it("a run waiting for a signal parks; a signal through the API wakes it; the same idempotency key delivers once", async () => {
    const run = await start(
      `export default async () => { const a = await signal<{ n: number }>("go"); const b = await signal<number>("go"); return a.n + b; };`,
    );
    const parked = await settled(run.id);
    assert.equal(parked.status, "waiting");
    assert.deepEqual(parked.waits, [{ kind: "signal", seq: 1, name: "go" }]);
    const first = await td.runs.signal(run.id, { name: "go", payload: { n: 40 }, idempotencyKey: "call_1" });
    assert.equal(first.duplicate, false);
    assert.deepEqual(await td.runs.signal(run.id, { name: "go", payload: { n: 999 }, idempotencyKey: "call_1" }), {
      signalId: first.signalId,
      duplicate: true,
    });
    await td.runs.signal(run.id, { name: "go", payload: 2 });
    const done = await settled(run.id);
    assert.deepEqual([done.status, done.output], ["completed", 42]);
    await rejects(td.runs.signal(run.id, { name: "go" }), 409, "conflict");
  });

  it("a call needing approval waits; it is listed, approved through the API, then sent once", async () => {
    const run = await start(`export default async () => shop.merge({ pr: 7 });`);
    const parked = await settled(run.id);
    assert.deepEqual(parked.waits, [{ kind: "approval", seq: 1, tool: "shop.merge", args: { pr: 7 } }]);
    assert.deepEqual(await td.approvals.pending(run.id), [{ kind: "approval", seq: 1, tool: "shop.merge", args: { pr: 7 }, id: `${run.id}/1`, runId: run.id }]);
    assert.ok((await td.approvals.pending()).some((a) => a.runId === run.id));
    await td.approvals.approve(run.id, 1, { reason: "looks good" });
    const done = await settled(run.id);
    assert.deepEqual([done.status, done.output], ["completed", "merged 7"]);
    const decided = (await td.runs.journal(run.id)).entries.find((e) => e.kind === "call.decided");
    assert.deepEqual(decided && { decision: decided.decision, reason: decided.reason }, { decision: "approved", reason: "looks good" });
    await rejects(td.approvals.approve(run.id, 1), 409, "conflict");
    assert.deepEqual(await td.approvals.pending(run.id), []);
  });

  it("a rejected call fails with approval_rejected and is never sent", async () => {
    const run = await start(`export default async () => { try { return await shop.merge({ pr: 1 }); } catch (e: any) { return e.code; } };`);
    await settled(run.id);
    await td.approvals.reject(run.id, 1, { reason: "not today" });
    assert.equal((await settled(run.id)).output, "approval_rejected");
  });

  it("a POST to a run-bound webhook URL wakes the run with its body; unknown tokens are 404, an ended run's 409", async () => {
    const run = await start(`export default async () => { const { url } = await webhook("paid"); console.log(url); return signal("paid"); };`);
    await settled(run.id);
    const logged = (await td.runs.journal(run.id)).entries.find((e) => e.kind === "log");
    const url = logged?.kind === "log" ? logged.message : "";
    assert.ok(url.startsWith(`${server.url}/hooks/`), `${url} points at the server's real address`);
    const post = (to: string, body: string) => fetch(to, { method: "POST", headers: { "content-type": "application/json" }, body });
    assert.equal((await post(`${url}x`, "{}")).status, 404);
    const delivered = await post(url, JSON.stringify({ amount: 5 }));
    assert.deepEqual([delivered.status, await delivered.json()], [200, { delivered: true }]);
    const done = await settled(run.id);
    assert.deepEqual([done.status, done.output], ["completed", { amount: 5 }]);
    const late = await post(url, "{}");
    assert.deepEqual([late.status, ((await late.json()) as { error: { code: string } }).error.code], [409, "conflict"]);
  });

  it("cancel ends a parked run (and leaves an ended one as it is); fork reuses the parent's calls", async () => {
    const waiting = await start(`export default async () => signal("never");`);
    await settled(waiting.id);
    const cancelled = await td.runs.cancel(waiting.id, { reason: "no longer needed" });
    assert.equal(cancelled.status, "cancelled");
    assert.equal((await td.runs.cancel(waiting.id)).status, "cancelled");

    const parent = await start(`export default async () => { const p = await shop.price({ sku: "abcd" }); throw new Error("bad total " + p.cents); };`);
    assert.equal((await settled(parent.id)).status, "failed");
    const forked = await td.runs.fork(parent.id, { source: `${HEADER}export default async () => (await shop.price({ sku: "abcd" })).cents;` });
    assert.equal(forked.kind, "started");
    if (forked.kind !== "started") return;
    assert.equal(forked.run.parent, parent.id);
    const done = await settled(forked.run.id);
    assert.equal(done.output, 400);
    const reused = (await td.runs.journal(forked.run.id)).entries.filter((e) => e.kind === "call.completed" && e.reusedFrom);
    assert.equal(reused.length, 1);
    assert.equal((await td.runs.fork(parent.id, { source: `${HEADER}export default () => shop.nope();` })).kind, "refused");
  });

  it("lists filter by status and labels, newest first", async () => {
    const a = await start(`export default () => 1;`, { labels: { conversation: "c1", agent: "x" } });
    const b = await start(`export default () => 2;`, { labels: { conversation: "c2", agent: "x" } });
    await Promise.all([settled(a.id), settled(b.id)]);
    assert.deepEqual(
      (await td.runs.list({ labels: { conversation: "c1" } })).map((r) => r.id),
      [a.id],
    );
    assert.deepEqual(
      (await td.runs.list({ labels: { agent: "x" } })).map((r) => r.id),
      [b.id, a.id],
    );
    assert.deepEqual(
      (await td.runs.list({ labels: { agent: "x" }, status: ["failed", "waiting"] })).map((r) => r.id),
      [],
    );
    assert.equal((await td.runs.list({ limit: 1 })).length, 1);
    assert.deepEqual(b.labels, { conversation: "c2", agent: "x" });
  });

  it("errors are typed: a missing run is 404, a bad key 401, an unknown toolset 404, a malformed request 400 naming the field", async () => {
    await rejects(td.runs.get("run_missing"), 404, "not_found");
    await rejects(server.client("tdk_not-a-key").runs.list(), 401, "unauthorized");
    await rejects(td.runs.start({ toolset: "ts_missing", source: "export default 1;" }), 404, "not_found");
    const wrong = await rejects(td.runs.start({ toolset, source: 5 as unknown as string }), 400, "invalid_request");
    assert.equal(wrong.message, "body.source must be a string.");
    const unknown = await rejects(td.runs.signal("run_x", { name: "go", extra: 1 } as never), 400, "invalid_request");
    assert.match(unknown.message, /unknown field "extra"/);
    await rejects(td.runs.get("run_x", { wait: 61 }), 400, "invalid_request");
    const huge = await rejects(td.runs.start({ toolset, source: "x".repeat(5 * 1024 * 1024) }), 413, "payload_too_large");
    assert.match(huge.message, /larger than 4194304 bytes/);
  });
});
