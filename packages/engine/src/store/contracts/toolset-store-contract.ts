import assert from "node:assert/strict";
import { describe } from "node:test";
import { contractTest, type StoreFactory } from "./contract-test.js";
import { toolset } from "./fixtures.js";

/**
 * The toolsets sub-store's contract (`toolset-store.ts`): pinned toolsets saved once by id, observed result shapes per toolset and tool. Public API for store implementers (`@tapedeck/engine/testing`).
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
