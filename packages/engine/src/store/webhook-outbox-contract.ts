/**
 * The behaviour every store's `webhookOutbox` must have, as part of the store contract
 * (`store-contract.ts` calls it inside its suite, with the same fresh-store factory).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import type { Store } from "./store.js";
import type { NewWebhookDelivery, WebhookEndpointRecord } from "./webhook-outbox.js";

/** The contract's `test`: each body gets a fresh, empty store (and a way to open its data again, when it has one). */
type Test = (title: string, body: (opened: { readonly store: Store; readonly reopen?: () => Promise<Store> }) => Promise<void>) => void;

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

export function describeWebhookOutboxContract(test: Test): void {
  void describe("webhook outbox", () => {
    test("endpoints round-trip with and without their optional fields, oldest first; an id is taken once", async ({ store }) => {
      const full = endpoint("wh_full", {
        events: ["run.completed", "run.failed"],
        namespace: "alice",
        labels: { team: "red", "dotted.key": 'q"' },
        description: "ops",
        anyAddress: true,
        createdAt: 2_000,
      });
      await store.webhookOutbox.putEndpoint(full);
      await store.webhookOutbox.putEndpoint(endpoint("wh_bare"));
      assert.deepEqual(await store.webhookOutbox.listEndpoints(), [endpoint("wh_bare"), full]);
      await assert.rejects(store.webhookOutbox.putEndpoint(endpoint("wh_bare", { url: "https://other.example" })));
      assert.equal((await store.webhookOutbox.listEndpoints()).length, 2);
    });

    test("deliveries are due in order of their next attempt; attempts are recorded until delivered or failed", async ({ store }) => {
      const outbox = store.webhookOutbox;
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

    test("listing pages newest first; deleting an endpoint deletes its deliveries and nothing else", async ({ store }) => {
      const outbox = store.webhookOutbox;
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

    test("pending deliveries are still due after the store is closed and opened again", async (opened) => {
      // A store that keeps nothing across opens has nothing to show here.
      if (!opened.reopen) return;
      await opened.store.webhookOutbox.putEndpoint(endpoint("wh_a"));
      await opened.store.webhookOutbox.putDeliveries([delivery("d1", "wh_a", 10)]);
      await opened.store.close();
      const again = await opened.reopen();
      assert.deepEqual(
        (await again.webhookOutbox.dueDeliveries(10, 10)).map((d) => [d.id, d.eventId, d.status]),
        [["d1", "evt_d1", "pending"]],
      );
    });
  });
}
