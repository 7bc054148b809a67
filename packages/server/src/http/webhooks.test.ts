import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Engine } from "@tapedeck/engine";
import { TapedeckError, verifyWebhook, type CreatedWebhookEndpoint, type Run, type Tapedeck, type WebhookEvent } from "@tapedeck/sdk";
import { TEST_RETRY_BASE_ENV } from "../cli/commands/serve.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { startReceiver, type ReceivedHook, type WebhookReceiver } from "./test-support/webhook-receiver.js";

/**
 * Webhooks out through a real `tapedeck serve` and loopback receivers: signatures the SDK
 * verifies (and refuses once tampered with), retries of failed attempts, deliveries that
 * survive a graceful restart and a SIGKILL, and endpoint scopes. The retry base is 20 ms
 * (a test-only setting), so three attempts take a fraction of a second.
 */
const ENV = { [TEST_RETRY_BASE_ENV]: "20" };

let server: ServeChild;
let adminKey: string;
let td: Tapedeck;
let toolset: string;
const receivers: WebhookReceiver[] = [];

before(async () => {
  server = await startServeChild({ env: ENV });
  adminKey = server.adminKey!;
  td = server.client(adminKey);
  toolset = (await td.toolsets.create({})).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  await Promise.all(receivers.map((r) => r.close()));
  server.cleanup();
});

/** Stops (gracefully) or kills the server, then starts it again on the same data folder. */
async function restart(how: "stop" | "kill"): Promise<void> {
  if (how === "stop") assert.equal(await server.stop(), 0, server.stderr());
  else await server.kill();
  server = await startServeChild({ dataDir: server.dataDir, env: ENV });
  td = server.client(adminKey);
}

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

async function run(source: string, options: { namespace?: string } = {}): Promise<Run> {
  const started = await td.runs.start({ toolset, source, ...options });
  if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
  return td.runs.get(started.run.id, { wait: 30 });
}

async function verified(hook: ReceivedHook, endpoint: CreatedWebhookEndpoint): Promise<WebhookEvent> {
  const result = await verifyWebhook(hook.body, hook.headers, endpoint.secret);
  assert.ok(result.ok, result.ok ? "" : result.message);
  return result.event;
}

describe("webhooks out", () => {
  it("events are signed: verifyWebhook accepts a delivery, and refuses it tampered with, under another secret, or stale", async () => {
    const r = await receiver();
    const endpoint = await td.webhooks.create({ url: r.url, events: ["run.completed"], description: "signatures" });
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(
      (await td.webhooks.list()).find((e) => e.id === endpoint.id),
      { id: endpoint.id, url: r.url, events: ["run.completed"], labels: {}, description: "signatures", createdAt: endpoint.createdAt },
    );
    const done = await run(`export default () => ({ answer: 42 });`);
    const hook = await r.request(1);
    const event = await verified(hook, endpoint);
    assert.deepEqual(event, {
      id: hook.headers["webhook-id"],
      type: "run.completed",
      createdAt: event.createdAt,
      data: { runId: done.id, toolset, labels: {}, output: { answer: 42 } },
    });
    assert.equal(hook.headers["content-type"], "application/json");
    assert.ok(
      (await verifyWebhook(new TextEncoder().encode(hook.body), new Headers(hook.headers as Record<string, string>), endpoint.secret)).ok,
      "bytes and a Headers object work too",
    );

    const refused = async (body: string, headers: Record<string, unknown>, secret: string, now?: number) => {
      const result = await verifyWebhook(body, headers as Record<string, string>, secret, now === undefined ? {} : { now });
      return result.ok ? "ok" : result.reason;
    };
    assert.equal(await refused(hook.body.replace("42", "43"), hook.headers, endpoint.secret), "invalid_signature");
    assert.equal(await refused(hook.body, hook.headers, `whsec_${Buffer.alloc(32, 7).toString("base64")}`), "invalid_signature");
    assert.equal(await refused(hook.body, { ...hook.headers, "webhook-id": "evt_other" }, endpoint.secret), "invalid_signature");
    assert.equal(await refused(hook.body, hook.headers, endpoint.secret, Date.now() + 600_000), "timestamp_out_of_tolerance");
    assert.equal(await refused(hook.body, { "webhook-id": "x" }, endpoint.secret), "missing_headers");
    await td.webhooks.delete(endpoint.id);
  });

  it("a receiver answering 500 twice then 200 gets three attempts of one event; the log, read after a restart, shows them", async () => {
    const r = await receiver((n) => (n <= 2 ? 500 : 200));
    const endpoint = await td.webhooks.create({ url: r.url, events: ["run.failed"] });
    const failed = await run(`export default async () => { throw new Error("no luck"); };`);
    const hooks = [await r.request(1), await r.request(2), await r.request(3)];
    const events = await Promise.all(hooks.map((hook) => verified(hook, endpoint)));
    assert.equal(new Set(hooks.map((h) => h.headers["webhook-id"])).size, 1, "one event id on every attempt");
    assert.equal(new Set(hooks.map((h) => h.body)).size, 1, "the same body on every attempt");
    assert.deepEqual([events[0]?.type, events[0]?.data.runId], ["run.failed", failed.id]);

    // A graceful stop records the attempt in flight; the log is read from the next start.
    await restart("stop");
    const { deliveries } = await td.webhooks.deliveries(endpoint.id);
    assert.equal(deliveries.length, 1);
    const [delivery] = deliveries;
    assert.deepEqual(
      [delivery?.status, delivery?.eventId, delivery?.eventType, delivery?.nextAttemptAt],
      ["delivered", hooks[0]!.headers["webhook-id"], "run.failed", undefined],
    );
    assert.deepEqual(
      delivery?.attempts.map((a) => [a.attempt, a.statusCode, a.error]),
      [
        [1, 500, "the receiver answered HTTP 500"],
        [2, 500, "the receiver answered HTTP 500"],
        [3, 200, undefined],
      ],
    );
    assert.equal(r.received.length, 3);
    await td.webhooks.delete(endpoint.id);
  });

  it("a delivery in flight when the server is SIGKILLed is sent again after the restart, with the same event id", async () => {
    const r = await receiver((n) => (n === 1 ? "hang" : 200));
    const endpoint = await td.webhooks.create({ url: r.url, events: ["run.cancelled"] });
    const waiting = await run(`export default async () => signal("never");`);
    await td.runs.cancel(waiting.id, { reason: "crash test" });
    const first = await r.request(1);
    await restart("kill");
    const second = await r.request(2);
    assert.equal(second.headers["webhook-id"], first.headers["webhook-id"]);
    assert.equal(second.body, first.body);
    const event = await verified(second, endpoint);
    assert.deepEqual([event.type, event.data.runId, event.type === "run.cancelled" ? event.data.reason : ""], ["run.cancelled", waiting.id, "crash test"]);
    await td.webhooks.delete(endpoint.id);
  });

  it("an event committed with its run but not yet fanned out when the server died is delivered by the next server", async () => {
    const r = await receiver();
    const endpoint = await td.webhooks.create({ url: r.url, events: ["run.completed"] });
    assert.equal(await server.stop(), 0, server.stderr());
    // The moment a crash can fall into: the engine committed the run's end and its event, and
    // nothing read the event yet. An engine recording events, with no server, leaves exactly that.
    const engine = await Engine.open({ store: server.dataDir, recordEvents: true, wake: false });
    let runId: string;
    try {
      const { id } = await engine.registerToolset({});
      assert.equal(id, toolset, "the same (empty) toolset");
      const started = await engine.start({ toolset: id, source: `export default () => "ended while no server listened";` });
      assert.equal(started.kind, "started");
      runId = started.kind === "started" ? started.runId : "";
      assert.equal((await engine.end(runId))?.status, "completed");
    } finally {
      await engine.close();
    }
    server = await startServeChild({ dataDir: server.dataDir, env: ENV });
    td = server.client(adminKey);
    const event = await verified(await r.request(1), endpoint);
    assert.deepEqual(
      [event.type, event.data.runId, event.type === "run.completed" ? event.data.output : undefined],
      ["run.completed", runId, "ended while no server listened"],
    );
    await td.webhooks.delete(endpoint.id);
  });

  it("an endpoint of a namespace never gets another namespace's events; endpoints are managed within scopes", async () => {
    const everything = await receiver();
    const aliceOnly = await receiver();
    const all = await td.webhooks.create({ url: everything.url, events: ["run.completed"] });
    const alice = await td.namespace("alice").webhooks.create({ url: aliceOnly.url });
    assert.equal(alice.namespace, "alice");
    const bobRun = await run(`export default () => "bob";`, { namespace: "bob" });
    const aliceRun = await run(`export default async () => { await signal("go"); return "alice"; };`, { namespace: "alice" });
    await td.runs.signal(aliceRun.id, { name: "go" });
    assert.equal((await td.runs.get(aliceRun.id, { wait: 30 })).output, "alice");
    // Both completions reached the unscoped endpoint, so both events are in the outbox (each event's deliveries are written together).
    const seen = await Promise.all([everything.request(1), everything.request(2)].map(async (p) => verified(await p, all)));
    assert.deepEqual(seen.map((e) => e.data.runId).sort(), [aliceRun.id, bobRun.id].sort());
    const { deliveries } = await td.webhooks.deliveries(alice.id);
    assert.deepEqual(deliveries.map((d) => d.eventType).sort(), ["run.completed", "run.waiting"]);
    const aliceCompleted = seen.find((e) => e.data.runId === aliceRun.id);
    assert.ok(
      deliveries.some((d) => d.eventId === aliceCompleted?.id),
      "alice's endpoint got alice's completion",
    );
    assert.ok(!deliveries.some((d) => d.eventId === seen.find((e) => e.data.runId === bobRun.id)?.id), "and never bob's");

    const aliceKey = await createKey(server.dataDir, "--namespace", "alice");
    const aliceClient = server.client(aliceKey);
    assert.deepEqual(
      (await aliceClient.webhooks.list()).map((e) => e.id),
      [alice.id],
    );
    await rejects(aliceClient.webhooks.delete(all.id), 404, "not_found");
    await rejects(aliceClient.webhooks.deliveries(all.id), 404, "not_found");
    await rejects(aliceClient.webhooks.create({ url: "http://127.0.0.1:9/hook" }), 400, "invalid_request");
    await rejects(aliceClient.webhooks.create({ url: "https://example.com/hook", namespace: "bob" }), 403, "forbidden");
    const token = await td.tokens.create({ namespace: "alice" });
    await rejects(server.client(token.token).webhooks.list(), 403, "forbidden");
    await rejects(td.webhooks.create({ url: "ftp://example.com/x" }), 400, "invalid_request");
    await aliceClient.webhooks.delete(alice.id);
    await rejects(td.webhooks.deliveries(alice.id), 404, "not_found");
    await td.webhooks.delete(all.id);
  });
});

async function rejects(call: Promise<unknown>, status: number, code: string): Promise<void> {
  try {
    await call;
  } catch (error) {
    assert.ok(TapedeckError.is(error), String(error));
    assert.deepEqual([error.status, error.code], [status, code], error.message);
    return;
  }
  assert.fail(`expected ${status} ${code}`);
}
