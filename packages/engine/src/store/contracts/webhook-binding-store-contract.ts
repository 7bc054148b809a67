import assert from "node:assert/strict";
import { describe } from "node:test";
import { contractTest, type StoreFactory } from "./contract-test.js";

/**
 * The webhook bindings sub-store's contract (`webhook-binding-store.ts`): a run-bound webhook found by its token's hash. Public API for store implementers (`@tapedeck/engine/testing`).
 */
export function describeWebhookBindingStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`WebhookBindingStore contract: ${name}`, () => {
    void describe("webhooks", () => {
      test("a binding is found by its token hash; an unknown hash is undefined", async ({ store }) => {
        const hook = { tokenHash: "ab12", runId: "run_h", name: "paid", createdAt: 5 };
        await store.putWebhook(hook);
        assert.deepEqual(await store.getWebhook("ab12"), hook);
        assert.equal(await store.getWebhook("ab13"), undefined);
      });
    });
  });
}
