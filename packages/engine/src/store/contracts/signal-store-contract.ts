import assert from "node:assert/strict";
import { describe } from "node:test";
import { contractTest, type StoreFactory } from "./contract-test.js";
import { entry, isConflict, log, newRun, started } from "./fixtures.js";

/**
 * The signals sub-store's contract (`signal-store.ts`): signals kept per run and name until an append consumes them (once), keys that make a second send a duplicate. Public API for store implementers (`@tapedeck/engine/testing`).
 */
export function describeSignalStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`SignalStore contract: ${name}`, () => {
    void describe("signals", () => {
      test("kept per run and name, oldest first, until consumed with an outcome", async ({ store }) => {
        await store.createRun(newRun("run_s", { status: "running" }), [started(0)]);
        const a = await store.putSignal({ runId: "run_s", name: "go", payload: { n: 1 }, at: 10 });
        await store.putSignal({ runId: "run_s", name: "other", payload: null, at: 11 });
        const b = await store.putSignal({ runId: "run_s", name: "go", payload: "two", at: 12 });
        assert.deepEqual(await store.pendingSignals("run_s", "go"), [
          { id: a.id, name: "go", payload: { n: 1 }, at: 10 },
          { id: b.id, name: "go", payload: "two", at: 12 },
        ]);
        const outcome = entry(1, { kind: "call.scheduled", seq: 1, tool: "tapedeck.signal", args: { name: "go" }, key: "run_s/1" });
        await store.append("run_s", [outcome], { updatedAt: 13, consumeSignals: [{ id: a.id, seq: 1 }] });
        assert.deepEqual(
          (await store.pendingSignals("run_s", "go")).map((s) => s.id),
          [b.id],
        );
      });

      test("consuming a signal twice conflicts and writes nothing of the batch", async ({ store }) => {
        await store.createRun(newRun("run_s", { status: "running" }), [started(0)]);
        const a = await store.putSignal({ runId: "run_s", name: "go", payload: 1, at: 10 });
        await store.append("run_s", [log(1)], { updatedAt: 11, consumeSignals: [{ id: a.id, seq: 1 }] });
        await assert.rejects(store.append("run_s", [log(2)], { updatedAt: 12, consumeSignals: [{ id: a.id, seq: 2 }] }), isConflict);
        assert.equal((await store.getRun("run_s"))?.journalLength, 2);
      });

      test("a key already used for the run returns the first signal instead of a second", async ({ store }) => {
        await store.createRun(newRun("run_s"), [started(0)]);
        await store.createRun(newRun("run_t"), [started(0)]);
        const first = await store.putSignal({ runId: "run_s", name: "go", payload: 1, at: 10, key: "k1" });
        const again = await store.putSignal({ runId: "run_s", name: "go", payload: 2, at: 11, key: "k1" });
        const elsewhere = await store.putSignal({ runId: "run_t", name: "go", payload: 3, at: 12, key: "k1" });
        assert.deepEqual(again, { id: first.id, duplicate: true });
        assert.equal(first.duplicate, false);
        assert.equal(elsewhere.duplicate, false);
        assert.deepEqual(
          (await store.pendingSignals("run_s", "go")).map((s) => s.payload),
          [1],
        );
      });

      test("signalByKey finds the signal kept for the run with a key, taken or not", async ({ store }) => {
        await store.createRun(newRun("run_s", { status: "running" }), [started(0)]);
        const kept = await store.putSignal({ runId: "run_s", name: "go", payload: 1, at: 10, key: "k1" });
        assert.equal(typeof (await store.signalByKey("run_s", "k1")), "number");
        await store.append("run_s", [log(1)], { updatedAt: 11, consumeSignals: [{ id: kept.id, seq: 1 }] });
        assert.equal(typeof (await store.signalByKey("run_s", "k1")), "number", "taken: still sent");
        assert.equal(await store.signalByKey("run_s", "k2"), undefined);
        assert.equal(await store.signalByKey("run_t", "k1"), undefined);
      });
    });
  });
}
