import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildRealm, disposeRealm, prepareIdleRealm } from "./realm.js";
import { compileQuickJs, SandboxHeap, type HeapSnapshot } from "./sandbox-heap.js";

/**
 * A heap put back from its snapshot in parts (how an idle worker restores a realm, a turn of its
 * event loop between parts) is the snapshot's, byte for byte, as a restore at once gives it.
 */
describe("a sandbox heap", () => {
  it("restored in parts of any size is exactly its snapshot again", async () => {
    const { heap, module } = await SandboxHeap.load(compileQuickJs());
    const runtime = module.newRuntime();
    const context = runtime.newContext();
    const snapshot = heap.snapshot();
    // Dirty several MiB of it, low and high.
    const result = context.evalCode("globalThis.kept = Array.from({ length: 20000 }, (_, i) => 'value-' + i + '-'.repeat(100)); kept.length");
    assert.equal(context.dump(context.unwrapResult(result)), 20000);
    const dirty = heap.snapshot();
    assert.notDeepEqual(dirty.runs, snapshot.runs, "the script changed the heap");
    // Odd part sizes: parts begin and end inside runs and inside pages.
    const part = 1024 * 1024 + 4097;
    heap.restoreRange(snapshot, 0, part);
    assert.notDeepEqual(heap.snapshot().runs, snapshot.runs, "one part is not all of it");
    for (let from = part; from < snapshot.bytes; from += part) heap.restoreRange(snapshot, from, Math.min(from + part, snapshot.bytes));
    assert.deepEqual(heap.snapshot(), snapshot);
    // Restoring what is restored changes nothing.
    heap.restore(snapshot);
    assert.deepEqual(heap.snapshot(), snapshot);
  });

  it("a realm taken between two parts of its restore is its snapshot whole, and the rest of the restore leaves it alone", async () => {
    const compiled = compileQuickJs();
    const realm = await buildRealm(compiled);
    const { snapshot } = realm as unknown as { snapshot: HeapSnapshot };
    const result = realm.context.evalCode("globalThis.kept = Array.from({ length: 30000 }, (_, i) => 'value-' + i + '-'.repeat(100)); 1");
    realm.context.unwrapResult(result).dispose();
    disposeRealm(realm);
    // One part is restored, then the restore waits a turn: the realm is taken meanwhile.
    const preparing = prepareIdleRealm(compiled);
    const taken = await buildRealm(compiled);
    assert.equal(taken, realm, "the idle realm is handed out again");
    assert.deepEqual(taken.heap.snapshot(), snapshot, "taking it finished its restore");
    const seen = taken.context.unwrapResult(taken.context.evalCode("typeof globalThis.kept"));
    assert.equal(taken.context.dump(seen), "undefined", "nothing of the last sandbox is left");
    seen.dispose();
    // The new sandbox fills several MiB: a restore going on in this realm would undo some of it.
    taken.context.unwrapResult(taken.context.evalCode("globalThis.mine = Array.from({ length: 30000 }, (_, i) => 'mine-' + i + '-'.repeat(100)); 1")).dispose();
    const lent = taken.heap.snapshot();
    await preparing;
    assert.deepEqual(taken.heap.snapshot(), lent, "the rest of the restore did not touch the lent realm");
  });
});
