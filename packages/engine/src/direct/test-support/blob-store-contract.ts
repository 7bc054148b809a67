/**
 * The behaviour every `BlobStore` must have: one suite, run by each implementation's test with
 * its own factory (`blob-store.test.ts`). In `test-support/`, so it is not shipped in the package.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import type { BlobStore } from "../../store/blob-store.js";
import { freshEachTest } from "../../test-support/fresh-each-test.js";

export interface OpenedBlobStore {
  readonly store: BlobStore;
  /** The same storage opened again (a restart), for stores that persist. */
  readonly reopen?: () => Promise<BlobStore>;
  readonly close: () => Promise<void>;
}

export function describeBlobStoreContract(name: string, open: () => Promise<OpenedBlobStore>): void {
  const test = freshEachTest(open);

  void describe(`blob store contract: ${name}`, () => {
    test("reads back exactly what was put, astral characters, lone surrogates and NUL included", async ({ store }) => {
      const text = `line 1\n😀 naïve 漢字\n${"x".repeat(100_000)}\ud800 \u0000 end`;
      await store.put("ses_1", "blob_a", text);
      assert.equal(await store.get("ses_1", "blob_a"), text);
    });

    test("a blob is readable only from the session that made it", async ({ store }) => {
      await store.put("ses_1", "blob_a", "secret");
      assert.equal(await store.get("ses_2", "blob_a"), undefined);
      assert.equal(await store.get("ses_1", "blob_b"), undefined);
    });

    test("putting a handle again keeps the first text (a handle is a hash of its text)", async ({ store }) => {
      await store.put("ses_1", "blob_a", "first");
      await store.put("ses_1", "blob_a", "second");
      assert.equal(await store.get("ses_1", "blob_a"), "first");
      await store.put("ses_2", "blob_a", "other session");
      assert.equal(await store.get("ses_2", "blob_a"), "other session");
    });

    test("deleting a session deletes its blobs and no other", async ({ store }) => {
      await store.put("ses_1", "blob_a", "a");
      await store.put("ses_1", "blob_b", "b");
      await store.put("ses_2", "blob_a", "c");
      assert.equal(await store.deleteSession("ses_1"), 2);
      assert.equal(await store.get("ses_1", "blob_a"), undefined);
      assert.equal(await store.get("ses_2", "blob_a"), "c");
      assert.equal(await store.deleteSession("ses_1"), 0);
    });

    test("deleting a handle deletes that blob of that session only, and a handle it has not is a no-op", async ({ store, reopen }) => {
      await store.put("ses_1", "blob_a", "a");
      await store.put("ses_1", "blob_b", "b");
      await store.put("ses_2", "blob_a", "c");
      await store.delete("ses_1", "blob_a");
      await store.delete("ses_1", "blob_none");
      const read = reopen === undefined ? store : await reopen();
      assert.equal(await read.get("ses_1", "blob_a"), undefined);
      assert.equal(await read.get("ses_1", "blob_b"), "b");
      assert.equal(await read.get("ses_2", "blob_a"), "c");
    });

    test("a put that resolved survives a reopen", async ({ store, reopen }) => {
      if (reopen === undefined) return; // an in-memory store has nothing to reopen
      await store.put("ses_1", "blob_a", "kept 😀");
      assert.equal(await (await reopen()).get("ses_1", "blob_a"), "kept 😀");
    });
  });
}
