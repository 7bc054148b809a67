import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { GIVEN_UP_UNTIL } from "../store/lease-store.js";
import { SqliteStore } from "../store/sqlite-store.js";
import type { Store } from "../store/store.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";

after(() => testSandboxes().close());

/** A store whose `claimRun` answers only when `open` is called: a claim in flight, held there. */
function gatedClaims(store: Store): { store: Store; claimed: Promise<void>; open: () => void } {
  let open!: () => void;
  let sent!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const claimed = new Promise<void>((resolve) => (sent = resolve));
  const gated = new Proxy(store, {
    get(target, key, receiver) {
      if (key !== "claimRun") {
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return async (...args: Parameters<Store["claimRun"]>) => {
        const answer = await target.claimRun(...args);
        sent();
        await gate;
        return answer;
      };
    },
  });
  return { store: gated, claimed, open };
}

describe("run takeover", () => {
  /**
   * The race a loaded CI machine hit: an engine's takeover scan claimed a run another engine had
   * given up, and the claim was answered after the engine had begun to close. The lease then
   * stayed live under a closed engine (no other engine would take the run for a whole lease) and
   * its renewal timer kept the process up for ever.
   */
  it("an engine that closes while a takeover claim is in flight gives that run up too: the next engine takes it at once", async () => {
    const tools = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    const t = await testEngine({ hostTools: tools.module() });
    const path = join(t.dataDir, "tapedeck.db");
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["n.add"]));
      const source = `import { n } from "tapedeck:tools";\nexport default async () => n.add({ x: (await signal("go")) as number });`;
      const started = await t.engine.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error("refused");
      assert.equal((await t.engine.settled(started.runId))?.status, "waiting");

      await t.engine.close(); // gives its leases up: the next engine's first scan claims the run
      const gated = gatedClaims(SqliteStore.open({ path, durability: "normal" }));
      const second = await t.reopen({ store: gated.store, hostTools: tools.module() });
      await gated.claimed;
      const closing = second.close();
      gated.open();
      await closing;

      const reader = SqliteStore.open({ path, durability: "normal" });
      try {
        const owner = (await reader.getRun(started.runId))?.owner;
        assert.equal(owner?.until, GIVEN_UP_UNTIL, `the lease won while closing is given up (owner ${JSON.stringify(owner)})`);
      } finally {
        await reader.close();
      }

      const third = await t.reopen({ hostTools: tools.module() });
      try {
        const sent = await third.signal(started.runId, "go", 41);
        assert.equal(sent.heldBy, undefined, "no live engine holds the run");
        const end = await third.end(started.runId);
        assert.deepEqual(end && end.status === "completed" ? end.output : end, 42);
      } finally {
        await third.close();
      }
    } finally {
      await t.cleanup();
    }
  });
});
