import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileQuickJs, SandboxHeap } from "./sandbox-heap.js";

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
});
