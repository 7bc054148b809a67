import assert from "node:assert/strict";
import { describe } from "node:test";
import { contractTest, type StoreFactory } from "./contract-test.js";
import { toolset } from "./fixtures.js";

/**
 * The toolsets sub-store's contract (`toolset-store.ts`): pinned toolsets saved once by id, their owners (a set of scopes), observed result shapes per toolset and tool. Public API for store implementers (`@tapedeck/engine/testing`).
 */
export function describeToolsetStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`ToolsetStore contract: ${name}`, () => {
    void describe("toolsets", () => {
      test("round-trips a toolset; an unknown id is undefined", async ({ store }) => {
        await store.putToolset(toolset);
        assert.deepEqual(await store.getToolset(toolset.id), toolset);
        assert.equal(await store.getToolset("ts_unknown"), undefined);
      });

      test("putting an id again is a no-op", async ({ store }) => {
        await store.putToolset(toolset);
        await store.putToolset(toolset);
        await store.putToolset({ id: toolset.id, tools: [] });
        assert.deepEqual(await store.getToolset(toolset.id), toolset);
      });

      test("owners: the first saver's scope; another scope saving the same toolset is added, each scope once", async ({ store }) => {
        assert.deepEqual(await store.getToolsetOwners(toolset.id), []);
        await store.putToolset(toolset, { namespace: "alice", labels: { team: "red", app: "x" } });
        assert.deepEqual(await store.getToolsetOwners(toolset.id), [{ namespace: "alice", labels: { app: "x", team: "red" } }]);
        await store.putToolset(toolset, { namespace: "alice", labels: { app: "x", team: "red" } });
        await store.putToolset(toolset, { labels: {} });
        await store.putToolset(toolset);
        const owners = await store.getToolsetOwners(toolset.id);
        assert.equal(owners.length, 2, "the same scope, its labels in another order, is one owner");
        assert.deepEqual(
          new Set(owners.map((owner) => JSON.stringify(owner))),
          new Set([JSON.stringify({ labels: {} }), JSON.stringify({ labels: { app: "x", team: "red" }, namespace: "alice" })]),
        );
        assert.deepEqual(await store.getToolsetOwners("ts_unknown"), []);
      });

      test("a toolset first saved without an owner gets none, whoever saves it again", async ({ store }) => {
        await store.putToolset(toolset);
        await store.putToolset(toolset, { namespace: "bob", labels: {} });
        assert.deepEqual(await store.getToolsetOwners(toolset.id), []);
        assert.deepEqual(await store.getToolset(toolset.id), toolset);
      });

      test("owners are kept per toolset", async ({ store }) => {
        const other = { ...toolset, id: "ts_other" };
        await store.putToolset(toolset, { namespace: "alice", labels: {} });
        await store.putToolset(other, { namespace: "bob", labels: {} });
        assert.deepEqual(await store.getToolsetOwners(toolset.id), [{ namespace: "alice", labels: {} }]);
        assert.deepEqual(await store.getToolsetOwners(other.id), [{ namespace: "bob", labels: {} }]);
      });

      test("observed shapes: saved per toolset and tool, replaced, and kept apart from other toolsets", async ({ store }) => {
        assert.deepEqual(await store.getObservedShapes("ts_a"), {});
        await store.putObservedShape("ts_a", "g.t", { type: "string" });
        await store.putObservedShape("ts_a", "g.u", { type: "object", properties: { n: { type: "number" } }, required: ["n"] });
        await store.putObservedShape("ts_b", "g.t", { type: "number" });
        await store.putObservedShape("ts_a", "g.t", { anyOf: [{ type: "string" }, { type: "null" }] });
        assert.deepEqual(await store.getObservedShapes("ts_a"), {
          "g.t": { anyOf: [{ type: "string" }, { type: "null" }] },
          "g.u": { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        });
        assert.deepEqual(await store.getObservedShapes("ts_b"), { "g.t": { type: "number" } });
      });
    });
  });
}
