/**
 * The API key store's contract (`api-key-store.ts`): keys found by their hash with their
 * limits, listed oldest first, an id or hash taken once, kept across close and reopen.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { serverContractTest, type ServerStoreFactory } from "./server-store-contract-test.js";

export function describeApiKeyStoreContract(name: string, open: ServerStoreFactory): void {
  const test = serverContractTest(open);
  void describe(`ApiKeyStore contract: ${name}`, () => {
    test("a key is found by its hash with its limits; an unknown hash is undefined; listed oldest first", async ({ server }) => {
      const limited = { id: "key_b", hash: "b".repeat(64), namespace: "alice", labels: { agent: "x", "dotted.key": 'quote"d' }, createdAt: 20 };
      const open = { id: "key_a", hash: "a".repeat(64), createdAt: 10 };
      await server.apiKeys.put(limited);
      await server.apiKeys.put(open);
      assert.deepEqual(await server.apiKeys.getByHash("b".repeat(64)), limited);
      assert.deepEqual(await server.apiKeys.getByHash("a".repeat(64)), open);
      assert.equal(await server.apiKeys.getByHash("c".repeat(64)), undefined);
      assert.deepEqual(await server.apiKeys.list(), [open, limited]);
    });

    test("a second key with the same id or the same hash is refused and changes nothing", async ({ server }) => {
      const key = { id: "key_a", hash: "a".repeat(64), createdAt: 10 };
      await server.apiKeys.put(key);
      await assert.rejects(server.apiKeys.put({ ...key, hash: "b".repeat(64) }));
      await assert.rejects(server.apiKeys.put({ ...key, id: "key_b", namespace: "eve" }));
      assert.deepEqual(await server.apiKeys.list(), [key]);
    });

    test("keys are there after close and reopen", async ({ store, server, reopen }) => {
      // A store that keeps nothing across opens has nothing to show here.
      if (reopen === undefined) return;
      const key = { id: "key_d", hash: "d".repeat(64), namespace: "alice", createdAt: 7 };
      await server.apiKeys.put(key);
      await store.close();
      const again = await reopen();
      assert.deepEqual(await again.server.apiKeys.list(), [key]);
    });
  });
}
