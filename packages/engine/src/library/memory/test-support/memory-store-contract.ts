/**
 * The behaviour every `MemoryStore` must have. SQLite runs it (`sqlite-memory-store.test.ts`);
 * a PostgreSQL store runs the same suite with its own factory.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { unit } from "../embeddings.js";
import type { MemoryStore, StoredChunk } from "../memory-store.js";
import { freshEachTest } from "../../../test-support/fresh-each-test.js";

export interface OpenedMemoryStore {
  readonly store: MemoryStore;
  /** Closes this store and opens the same data again. */
  readonly reopen: () => Promise<MemoryStore>;
  readonly close: () => Promise<void>;
}

const chunks = (...texts: string[]): StoredChunk[] => texts.map((text) => ({ text }));
const vector = (...xs: number[]) => unit(Float32Array.from(xs));

export function describeMemoryStoreContract(name: string, open: () => Promise<OpenedMemoryStore>): void {
  const test = freshEachTest(open);

  void describe(`MemoryStore contract: ${name}`, () => {
    test("put creates version 1, then replaces only from the version it read; a stale writer gets the current version", async ({ store }) => {
      assert.deepEqual(await store.put("ns", { path: "a.md", content: "one", chunks: chunks("one"), at: 10, expectedVersion: 0 }), { ok: true, version: 1 });
      assert.deepEqual(await store.get("ns", "a.md"), { path: "a.md", content: "one", version: 1, updatedAt: 10 });
      assert.deepEqual(await store.put("ns", { path: "a.md", content: "two", chunks: chunks("two"), at: 20, expectedVersion: 0 }), {
        ok: false,
        currentVersion: 1,
      });
      assert.deepEqual(await store.put("ns", { path: "a.md", content: "two", chunks: chunks("two"), at: 20, expectedVersion: 1 }), { ok: true, version: 2 });
      assert.deepEqual(await store.put("ns", { path: "a.md", content: "three", chunks: [], at: 30, expectedVersion: 1 }), { ok: false, currentVersion: 2 });
      assert.equal((await store.get("ns", "a.md"))?.content, "two");
      assert.equal(await store.get("ns", "b.md"), undefined);
    });

    test("namespaces never meet: get, list and both searches see only their own", async ({ store }) => {
      const embedding = vector(1, 0);
      await store.put("alice", { path: "x.md", content: "kiwi", chunks: [{ text: "kiwi fruit", embedding }], embeddingModel: "m", at: 1, expectedVersion: 0 });
      await store.put("bob", { path: "y.md", content: "kiwi", chunks: [{ text: "kiwi bird", embedding }], embeddingModel: "m", at: 1, expectedVersion: 0 });
      assert.equal(await store.get("bob", "x.md"), undefined);
      assert.deepEqual(
        (await store.list("bob", "", 10)).map((d) => d.path),
        ["y.md"],
      );
      assert.deepEqual(
        (await store.searchText("bob", ["kiwi"], 10)).map((h) => h.text),
        ["kiwi bird"],
      );
      assert.deepEqual(
        (await store.searchVector("bob", "m", embedding, 10)).map((h) => h.text),
        ["kiwi bird"],
      );
      assert.deepEqual(await store.searchText("carol", ["kiwi"], 10), []);
    });

    test("erasing a namespace deletes its documents from get, list and both searches; another's stay, and it can write again", async ({ store }) => {
      const embedding = vector(1, 0);
      for (const [ns, path] of [
        ["alice", "a.md"],
        ["alice", "b.md"],
        ["bob", "c.md"],
      ] as const) {
        await store.put(ns, { path, content: "kiwi", chunks: [{ text: `kiwi of ${ns}`, embedding }], embeddingModel: "m", at: 1, expectedVersion: 0 });
      }
      assert.equal(await store.eraseNamespace("alice"), 2);
      assert.equal(await store.get("alice", "a.md"), undefined);
      assert.deepEqual(await store.list("alice", "", 10), []);
      assert.deepEqual(await store.searchText("alice", ["kiwi"], 10), []);
      assert.deepEqual(await store.searchVector("alice", "m", embedding, 10), []);
      assert.deepEqual(
        (await store.searchText("bob", ["kiwi"], 10)).map((h) => h.text),
        ["kiwi of bob"],
      );
      assert.equal(await store.eraseNamespace("alice"), 0);
      assert.deepEqual(await store.put("alice", { path: "a.md", content: "new", chunks: chunks("new kiwi"), at: 2, expectedVersion: 0 }), {
        ok: true,
        version: 1,
      });
      assert.deepEqual(
        (await store.searchText("alice", ["kiwi"], 10)).map((h) => h.text),
        ["new kiwi"],
      );
    });

    test("full-text scores are a namespace's own: alice's scores and order for a query do not move when bob writes documents with its words", async ({
      store,
    }) => {
      const alices = [
        ["herons.md", "The grey heron waits by the river for fish."],
        ["river.md", "The river floods in spring; the heron nests upstream near the old mill."],
        ["mill.md", "The mill wheel turned until 1950, and fish ladders were built beside it."],
        ["garden.md", "Tomatoes and beans grow in the garden behind the house."],
      ] as const;
      for (const [path, text] of alices) await store.put("alice", { path, content: text, chunks: chunks(text), at: 1, expectedVersion: 0 });
      const query = ["heron", "river", "fish", "mill"];
      const before = await store.searchText("alice", query, 10);
      assert.ok(before.length >= 3, "alice finds her notes");
      // Bob writes many documents full of the query's words, some of them over and over.
      for (let i = 0; i < 60; i++) {
        const text = i % 3 === 0 ? "heron heron heron river" : i % 3 === 1 ? `fish mill fish mill note ${i}` : `river ${"words ".repeat(i)}`;
        await store.put("bob", { path: `bob/${i}.md`, content: text, chunks: chunks(text), at: 2, expectedVersion: 0 });
      }
      assert.deepEqual(await store.searchText("alice", query, 10), before, "alice's hits, order and scores are exactly as before bob wrote");
      assert.ok((await store.searchText("bob", query, 100)).length > 0, "bob finds his own");
    });

    test("list: by prefix, sorted by path, bounded, with sizes; a prefix is literal text, not a pattern", async ({ store }) => {
      for (const path of ["b/2.md", "a/1.md", "b/1.md", "b%/x.md", "b_/y.md", "c.md"]) {
        await store.put("ns", { path, content: `content ${path}`, chunks: [], at: 5, expectedVersion: 0 });
      }
      assert.deepEqual(
        (await store.list("ns", "", 10)).map((d) => d.path),
        ["a/1.md", "b%/x.md", "b/1.md", "b/2.md", "b_/y.md", "c.md"],
      );
      assert.deepEqual(
        (await store.list("ns", "b/", 10)).map((d) => d.path),
        ["b/1.md", "b/2.md"],
      );
      assert.deepEqual(
        (await store.list("ns", "b%/", 10)).map((d) => d.path),
        ["b%/x.md"],
      );
      assert.deepEqual(
        (await store.list("ns", "", 2)).map((d) => d.path),
        ["a/1.md", "b%/x.md"],
      );
      assert.deepEqual((await store.list("ns", "c", 10))[0], { path: "c.md", sizeChars: "content c.md".length, updatedAt: 5 });
    });

    test("searchText ranks by BM25 over stemmed words, with the chunk's position; replaced chunks are no longer found", async ({ store }) => {
      await store.put("ns", {
        path: "a.md",
        content: "",
        chunks: chunks("intro", "the deploy failed; deploys failing again after deploying"),
        at: 1,
        expectedVersion: 0,
      });
      await store.put("ns", {
        path: "b.md",
        content: "",
        chunks: chunks("we deployed once, on a Tuesday, and everything else was about lunch"),
        at: 1,
        expectedVersion: 0,
      });
      await store.put("ns", { path: "c.md", content: "", chunks: chunks("nothing relevant"), at: 1, expectedVersion: 0 });
      const hits = await store.searchText("ns", ["deploy"], 10);
      assert.deepEqual(
        hits.map((h) => [h.path, h.chunk]),
        [
          ["a.md", 1],
          ["b.md", 0],
        ],
      );
      assert.ok(hits[0]!.score > hits[1]!.score, "higher is better");
      assert.deepEqual(
        (await store.searchText("ns", ["tuesday", "lunch", "café"], 1)).map((h) => h.path),
        ["b.md"],
      );
      await store.put("ns", { path: "a.md", content: "", chunks: chunks("now about gardening"), at: 2, expectedVersion: 1 });
      assert.deepEqual(
        (await store.searchText("ns", ["deploy"], 10)).map((h) => h.path),
        ["b.md"],
      );
      assert.deepEqual(
        (await store.searchText("ns", ["gardening"], 10)).map((h) => h.path),
        ["a.md"],
      );
      assert.deepEqual(await store.searchText("ns", [], 10), []);
      assert.deepEqual(await store.searchText("ns", ['"', "OR", "NEAR(", "*"], 10), [], "query syntax in terms is only text");
    });

    test("searchText also finds a document by the words of its path (notes are named for what they are about)", async ({ store }) => {
      await store.put("ns", { path: "people/sofia.md", content: "", chunks: chunks("one-to-one every Thursday"), at: 1, expectedVersion: 0 });
      await store.put("ns", { path: "notes/x.md", content: "", chunks: chunks("nothing about people"), at: 1, expectedVersion: 0 });
      assert.deepEqual(
        (await store.searchText("ns", ["sofia"], 10)).map((h) => h.path),
        ["people/sofia.md"],
      );
    });

    test("searchVector: cosine similarity among the chunks of one model, most similar first", async ({ store }) => {
      await store.put("ns", {
        path: "a.md",
        content: "",
        chunks: [{ text: "a", embedding: vector(1, 0, 0) }],
        embeddingModel: "m1",
        at: 1,
        expectedVersion: 0,
      });
      await store.put("ns", {
        path: "b.md",
        content: "",
        chunks: [{ text: "b", embedding: vector(1, 1, 0) }],
        embeddingModel: "m1",
        at: 1,
        expectedVersion: 0,
      });
      await store.put("ns", {
        path: "c.md",
        content: "",
        chunks: [{ text: "c", embedding: vector(0, 0, 1) }],
        embeddingModel: "m1",
        at: 1,
        expectedVersion: 0,
      });
      await store.put("ns", {
        path: "d.md",
        content: "",
        chunks: [{ text: "d", embedding: vector(1, 0, 0) }],
        embeddingModel: "m2",
        at: 1,
        expectedVersion: 0,
      });
      await store.put("ns", { path: "e.md", content: "", chunks: chunks("not embedded"), at: 1, expectedVersion: 0 });
      const hits = await store.searchVector("ns", "m1", vector(1, 0.1, 0), 10);
      assert.deepEqual(
        hits.map((h) => h.path),
        ["a.md", "b.md", "c.md"],
      );
      assert.ok(Math.abs(hits[0]!.score - 0.995) < 0.001);
      assert.deepEqual(
        (await store.searchVector("ns", "m1", vector(0, 0, 1), 1)).map((h) => h.path),
        ["c.md"],
      );
      assert.deepEqual(await store.searchVector("ns", "m3", vector(1, 0, 0), 10), []);
    });

    test("what was written survives closing and opening the store again", async ({ store, reopen }) => {
      await store.put("ns", {
        path: "keep.md",
        content: "kept",
        chunks: [{ text: "kept words", embedding: vector(0, 1) }],
        embeddingModel: "m",
        at: 7,
        expectedVersion: 0,
      });
      const again = await reopen();
      assert.deepEqual(await again.get("ns", "keep.md"), { path: "keep.md", content: "kept", version: 1, updatedAt: 7 });
      assert.equal((await again.searchText("ns", ["words"], 5)).length, 1);
      assert.equal((await again.searchVector("ns", "m", vector(0, 1), 5)).length, 1);
    });
  });
}
