/**
 * The credentials sub-store's contract (`credential-store.ts`): sealed credentials by scope and
 * name, replaced on renewal, listed, deleted, and rewrapped in one commit. Public API for store
 * implementers (`@tapedeck/engine/testing`).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import type { SealedCredential } from "../credential-store.js";
import { contractTest, type StoreFactory } from "./contract-test.js";

const credential = (scopeKey: string, name: string, extra: Partial<SealedCredential> = {}): SealedCredential => ({
  scopeKey,
  name,
  kind: "bearer",
  hosts: ["api.example.com", "*.example.org"],
  keyId: "k1",
  iv: "aXY",
  sealed: "c2VhbGVk",
  createdAt: 1_000,
  updatedAt: 1_000,
  ...extra,
});

const TOOLSET = '["toolset","ts_1"]';
const RUN = '["run","run_1"]';
const NAMESPACE = '["namespace","ts_1","alice"]';

export function describeCredentialStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`CredentialStore contract: ${name}`, () => {
    test("round-trip by scope and name; a second put of the same scope and name replaces it", async ({ store }) => {
      const first = credential(TOOLSET, "GITHUB");
      await store.credentials.put(first);
      await store.credentials.put(credential(RUN, "GITHUB", { createdAt: 2_000, updatedAt: 2_000 }));
      assert.deepEqual(await store.credentials.get(TOOLSET, "GITHUB"), first);
      assert.equal(await store.credentials.get(NAMESPACE, "GITHUB"), undefined);
      const expiring = credential(TOOLSET, "GITHUB", { expiresAt: 9_000, updatedAt: 2_500 });
      await store.credentials.put(expiring);
      assert.deepEqual(await store.credentials.get(TOOLSET, "GITHUB"), expiring);
      const renewed = credential(TOOLSET, "GITHUB", { kind: "headers", hosts: ["a.example"], keyId: "k2", iv: "bmV3", sealed: "bmV3", updatedAt: 3_000 });
      await store.credentials.put(renewed);
      assert.deepEqual(await store.credentials.get(TOOLSET, "GITHUB"), renewed, "a renewal without an expiry clears it");
      assert.deepEqual(
        (await store.credentials.list()).map((c) => [c.scopeKey, c.name]),
        [
          [TOOLSET, "GITHUB"],
          [RUN, "GITHUB"],
        ],
      );
    });

    test("inScopes answers the credentials of the scopes asked, and of no other", async ({ store }) => {
      await store.credentials.put(credential(TOOLSET, "A"));
      await store.credentials.put(credential(NAMESPACE, "B"));
      await store.credentials.put(credential(RUN, "C"));
      await store.credentials.put(credential('["run","run_2"]', "D"));
      const names = async (keys: string[]) => (await store.credentials.inScopes(keys)).map((c) => c.name).sort();
      assert.deepEqual(await names([RUN, NAMESPACE, TOOLSET]), ["A", "B", "C"]);
      assert.deepEqual(await names([RUN]), ["C"]);
      assert.deepEqual(await names([]), []);
    });

    test("delete says whether there was one", async ({ store }) => {
      await store.credentials.put(credential(TOOLSET, "A"));
      assert.equal(await store.credentials.delete(TOOLSET, "A"), true);
      assert.equal(await store.credentials.delete(TOOLSET, "A"), false);
      assert.deepEqual(await store.credentials.list(), []);
    });

    test("rewrap rewrites every credential in one commit; a rewrite that throws changes nothing", async ({ store, reopen }) => {
      await store.credentials.put(credential(TOOLSET, "A"));
      await store.credentials.put(credential(RUN, "B"));
      let calls = 0;
      await assert.rejects(
        store.credentials.rewrap((c) => {
          if (++calls === 2) throw new Error("cannot open");
          return { ...c, keyId: "k2" };
        }),
        /cannot open/,
      );
      assert.deepEqual(
        (await store.credentials.list()).map((c) => c.keyId),
        ["k1", "k1"],
      );
      assert.equal(await store.credentials.rewrap((c) => ({ ...c, keyId: "k2", sealed: `${c.sealed}2` })), 2);
      let after = store;
      if (reopen) {
        await store.close();
        after = await reopen();
      }
      assert.deepEqual(
        (await after.credentials.list()).map((c) => [c.keyId, c.sealed]),
        [
          ["k2", "c2VhbGVk2"],
          ["k2", "c2VhbGVk2"],
        ],
      );
    });
  });
}
