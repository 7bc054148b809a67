/**
 * The webhook outbox's contract (`webhook-outbox-store.ts`): endpoints, deliveries due in order,
 * attempts recorded until delivered or failed, pages, deletes, the fan-out of the events the
 * engine's store recorded (each once, its deliveries in the same commit), and durability.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import type { RunEvent } from "@tapedeck/protocol";
import { serverContractTest, type ServerStoreFactory } from "./server-store-contract-test.js";
import type { NewWebhookDelivery, WebhookEndpointRecord } from "./webhook-outbox-store.js";

const endpoint = (id: string, extra: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord => ({
  id,
  url: `https://example.com/${id}`,
  secret: "sealed:abc",
  createdAt: 1_000,
  ...extra,
});

const delivery = (id: string, endpointId: string, nextAttemptAt: number): NewWebhookDelivery => ({
  id,
  endpointId,
  eventId: `evt_${id}`,
  eventType: "run.completed",
  body: `{"id":"evt_${id}","data":{"q":"héllo ✓"}}`,
  createdAt: 1_000,
  nextAttemptAt,
});

export function describeWebhookOutboxContract(name: string, open: ServerStoreFactory): void {
  const test = serverContractTest(open);
  void describe(`WebhookOutboxStore contract: ${name}`, () => {
    test("the events the engine recorded are fanned out once, each with its deliveries in one commit", async ({ store, server }) => {
      const run = { id: "run_ev", toolsetId: "ts_x", source: "", js: "", sourceMap: "", input: null, status: "running", createdAt: 1 } as const;
      const started = { index: 0, at: 1, kind: "run.started", input: null, replayVersion: 1 } as const;
      await store.createRun(run, [started]);
      const waiting: RunEvent = { type: "run.waiting", runId: "run_ev", waits: [{ kind: "sleep", seq: 1, until: 99 }], wakeAt: 99 };
      const ended: RunEvent = { type: "run.ended", runId: "run_ev", end: { status: "completed", output: null } };
      await store.append("run_ev", [], { updatedAt: 20, status: "waiting", events: [waiting] });
      await store.append("run_ev", [], { updatedAt: 30, status: "completed", events: [ended] });
      const recorded = await store.recordedEvents(10);
      assert.deepEqual(
        recorded.map((r) => r.event.type),
        ["run.waiting", "run.ended"],
      );
      const outbox = server.webhookOutbox;
      await outbox.putEndpoint(endpoint("wh_ev"));
      const first = delivery("dlv_ev", "wh_ev", 20);
      assert.equal(await outbox.fanOut([{ recorded: recorded[0]!.id, deliveries: [first] }]), 1);
      assert.equal(
        await outbox.fanOut([{ recorded: recorded[0]!.id, deliveries: [delivery("dlv_again", "wh_ev", 20)] }]),
        0,
        "fanned out once: a second server gets nothing to send",
      );
      assert.deepEqual(
        (await store.recordedEvents(10)).map((r) => r.event.type),
        ["run.ended"],
      );
      assert.deepEqual(
        (await outbox.dueDeliveries(20, 10)).map((d) => d.id),
        ["dlv_ev"],
      );
      assert.equal(await outbox.fanOut([{ recorded: recorded[1]!.id, deliveries: [] }]), 1);
      assert.deepEqual(await store.recordedEvents(10), []);
    });

    test("endpoints round-trip with and without their optional fields, oldest first; an id is taken once", async ({ server }) => {
      const full = endpoint("wh_full", {
        events: ["run.completed", "run.failed"],
        namespace: "alice",
        labels: { team: "red", "dotted.key": 'q"' },
        description: "ops",
        anyAddress: true,
        createdAt: 2_000,
      });
      await server.webhookOutbox.putEndpoint(full);
      await server.webhookOutbox.putEndpoint(endpoint("wh_bare"));
      assert.deepEqual(await server.webhookOutbox.listEndpoints(), [endpoint("wh_bare"), full]);
      await assert.rejects(server.webhookOutbox.putEndpoint(endpoint("wh_bare", { url: "https://other.example" })));
      assert.equal((await server.webhookOutbox.listEndpoints()).length, 2);
    });

    test("deliveries are due in order of their next attempt; attempts are recorded until delivered or failed", async ({ server }) => {
      const outbox = server.webhookOutbox;
      await outbox.putEndpoint(endpoint("wh_a"));
      assert.equal(await outbox.nextDeliveryAt(), undefined);
      await outbox.putDeliveries([delivery("d1", "wh_a", 50), delivery("d2", "wh_a", 10), delivery("d3", "wh_a", 900)]);
      assert.equal(await outbox.nextDeliveryAt(), 10);
      assert.deepEqual(
        (await outbox.dueDeliveries(100, 10)).map((d) => d.id),
        ["d2", "d1"],
      );
      assert.deepEqual(
        (await outbox.dueDeliveries(100, 1)).map((d) => d.id),
        ["d2"],
      );

      await outbox.recordAttempt("d2", { attempt: 1, at: 100, durationMs: 5, statusCode: 500, error: "HTTP 500" }, { status: "pending", nextAttemptAt: 300 });
      await outbox.recordAttempt("d1", { attempt: 1, at: 100, durationMs: 7, statusCode: 204 }, { status: "delivered" });
      assert.deepEqual(
        (await outbox.dueDeliveries(100, 10)).map((d) => d.id),
        [],
      );
      assert.equal(await outbox.nextDeliveryAt(), 300);
      await outbox.recordAttempt("d2", { attempt: 2, at: 300, durationMs: 1, error: "connection refused" }, { status: "failed" });

      const [d3, d2, d1] = await outbox.listDeliveries("wh_a", { limit: 10 });
      const { nextAttemptAt: _, ...written } = delivery("d1", "wh_a", 50);
      assert.deepEqual(d1, { ...written, status: "delivered", attempts: [{ attempt: 1, at: 100, durationMs: 7, statusCode: 204 }], updatedAt: 107 });
      assert.deepEqual(d2?.attempts, [
        { attempt: 1, at: 100, durationMs: 5, statusCode: 500, error: "HTTP 500" },
        { attempt: 2, at: 300, durationMs: 1, error: "connection refused" },
      ]);
      assert.deepEqual(
        [d2?.status, d2?.nextAttemptAt, d3?.status, d3?.nextAttemptAt, d3?.body],
        ["failed", undefined, "pending", 900, delivery("d3", "wh_a", 0).body],
      );
      assert.equal(await outbox.nextDeliveryAt(), 900);
    });

    test("listing pages newest first; deleting an endpoint deletes its deliveries and nothing else", async ({ server }) => {
      const outbox = server.webhookOutbox;
      await outbox.putEndpoint(endpoint("wh_a"));
      await outbox.putEndpoint(endpoint("wh_b"));
      await outbox.putDeliveries([delivery("a1", "wh_a", 1), delivery("b1", "wh_b", 2), delivery("a2", "wh_a", 3), delivery("a3", "wh_a", 4)]);
      assert.deepEqual(
        (await outbox.listDeliveries("wh_a", { limit: 2 })).map((d) => d.id),
        ["a3", "a2"],
      );
      assert.deepEqual(
        (await outbox.listDeliveries("wh_a", { limit: 2, before: "a2" })).map((d) => d.id),
        ["a1"],
      );
      assert.equal(await outbox.deleteEndpoint("wh_a"), true);
      assert.equal(await outbox.deleteEndpoint("wh_a"), false);
      assert.deepEqual(await outbox.listDeliveries("wh_a", { limit: 10 }), []);
      assert.deepEqual(
        (await outbox.dueDeliveries(10, 10)).map((d) => d.id),
        ["b1"],
      );
      assert.deepEqual(
        (await outbox.listEndpoints()).map((e) => e.id),
        ["wh_b"],
      );
      // An attempt finishing after its endpoint was deleted changes nothing.
      await outbox.recordAttempt("a1", { attempt: 1, at: 5, durationMs: 1, statusCode: 200 }, { status: "delivered" });
      assert.deepEqual(await outbox.listDeliveries("wh_a", { limit: 10 }), []);
    });

    test("a purge deletes the deliveries done before the time, in batches; pending ones and those done since stay", async ({ server }) => {
      const outbox = server.webhookOutbox;
      await outbox.putEndpoint(endpoint("wh_a"));
      await outbox.putDeliveries([delivery("d1", "wh_a", 1), delivery("d2", "wh_a", 2), delivery("d3", "wh_a", 3), delivery("d4", "wh_a", 4)]);
      await outbox.recordAttempt("d1", { attempt: 1, at: 10, durationMs: 1, statusCode: 200 }, { status: "delivered" });
      await outbox.recordAttempt("d2", { attempt: 1, at: 20, durationMs: 1, error: "HTTP 410" }, { status: "failed" });
      await outbox.recordAttempt("d3", { attempt: 1, at: 30, durationMs: 1, error: "HTTP 500" }, { status: "pending", nextAttemptAt: 40 });
      await outbox.recordAttempt("d4", { attempt: 1, at: 100, durationMs: 1, statusCode: 200 }, { status: "delivered" });
      assert.equal(await outbox.countPurgeableDeliveries(50), 2);
      assert.equal(await outbox.purgeDeliveries(50, 1), 1);
      assert.equal(await outbox.purgeDeliveries(50, 1), 1);
      assert.equal(await outbox.purgeDeliveries(50, 1), 0);
      assert.deepEqual(
        (await outbox.listDeliveries("wh_a", { limit: 10 })).map((d) => d.id),
        ["d4", "d3"],
      );
    });

    test("an erasure deletes a namespace's deliveries (pending ones too) and endpoints, in batches; another namespace's stay", async ({ server }) => {
      const outbox = server.webhookOutbox;
      await outbox.putEndpoint(endpoint("wh_op"));
      await outbox.putEndpoint(endpoint("wh_alice", { namespace: "alice" }));
      const of = (id: string, endpointId: string, namespace: string): NewWebhookDelivery => ({
        ...delivery(id, endpointId, 1),
        body: JSON.stringify({ id: `evt_${id}`, type: "run.completed", createdAt: 1, data: { runId: "run_1", toolset: "ts", namespace, labels: {} } }),
      });
      await outbox.putDeliveries([of("a1", "wh_op", "alice"), of("a2", "wh_op", "alice"), of("a3", "wh_alice", "alice"), of("b1", "wh_op", "bob")]);
      await outbox.recordAttempt("a1", { attempt: 1, at: 10, durationMs: 1, statusCode: 200 }, { status: "delivered" });
      assert.deepEqual(await outbox.countNamespace("alice"), { deliveries: 3, endpoints: 1 });
      assert.deepEqual(await outbox.eraseNamespace("alice", 2), { deliveries: 2, endpoints: 0 });
      assert.deepEqual(await outbox.eraseNamespace("alice", 2), { deliveries: 1, endpoints: 0 });
      assert.deepEqual(await outbox.eraseNamespace("alice", 2), { deliveries: 0, endpoints: 1 });
      assert.deepEqual(await outbox.eraseNamespace("alice", 2), { deliveries: 0, endpoints: 0 });
      assert.deepEqual(
        (await outbox.listEndpoints()).map((e) => e.id),
        ["wh_op"],
      );
      assert.deepEqual(
        (await outbox.listDeliveries("wh_op", { limit: 10 })).map((d) => d.id),
        ["b1"],
      );
    });

    test("pending deliveries are still due after the store is closed and opened again", async (opened) => {
      // A store that keeps nothing across opens has nothing to show here.
      if (!opened.reopen) return;
      await opened.server.webhookOutbox.putEndpoint(endpoint("wh_a"));
      await opened.server.webhookOutbox.putDeliveries([delivery("d1", "wh_a", 10)]);
      await opened.store.close();
      const again = await opened.reopen();
      assert.deepEqual(
        (await again.server.webhookOutbox.dueDeliveries(10, 10)).map((d) => [d.id, d.eventId, d.status]),
        [["d1", "evt_d1", "pending"]],
      );
    });
  });
}
