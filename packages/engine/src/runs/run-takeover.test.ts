import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { GIVEN_UP_UNTIL } from "../store/lease-store.js";
import { SqliteStore } from "../store/sqlite-store.js";
import type { Store } from "../store/store.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";
import { eventually } from "../store/contracts/contract-test.js";

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

/** A store whose lease renewals never reach the database: a node too slow to renew, whose leases lapse while it executes. */
function stalledRenewals(store: Store): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "renewLeases") return () => Promise.resolve();
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A store whose `pendingSignals` reads tell `looked` once answered: the execution has looked for kept signals. */
function watchedSignalReads(store: Store): { store: Store; looked: Promise<void> } {
  let seen!: () => void;
  const looked = new Promise<void>((resolve) => (seen = resolve));
  const watched = new Proxy(store, {
    get(target, key, receiver) {
      if (key === "pendingSignals")
        return async (...args: Parameters<Store["pendingSignals"]>) => {
          const answer = await target.pendingSignals(...args);
          seen();
          return answer;
        };
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: watched, looked };
}

/** A store whose reads of one run show its holder's lease lapsed: the stale view of a loaded node, or of a read answered late. */
function staleLeaseReads(store: Store): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "getRun")
        return async (...args: Parameters<Store["getRun"]>) => {
          const run = await target.getRun(...args);
          return run?.owner === undefined ? run : { ...run, owner: { ...run.owner, until: 1 } };
        };
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("run takeover", () => {
  /**
   * Issue 22's stranded runs: a live node whose lease lapsed under load had its run taken over;
   * its next append lost the race (a conflict counted as a fault of the host), and it released
   * the run to nobody. Now its write names the lease epoch it won and is refused as
   * `lease_lost`: it stops there, counts nothing against the run and leaves it to the new holder.
   */
  it("a node whose lease lapsed while it executed stops at its next write (lease_lost): no fault counted, the run not released, the new holder ends it", async () => {
    const slow = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    slow.hold("n.add");
    const fast = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    const base = await testEngine({ wake: false });
    const path = join(base.dataDir, "tapedeck.db");
    const a = await base.reopen({ store: stalledRenewals(SqliteStore.open({ path, durability: "normal" })), hostTools: slow.module(), leaseMs: 900 });
    let b: Awaited<ReturnType<typeof base.reopen>> | undefined;
    try {
      const { id } = await a.registerToolset(harnessToolset(["n.add"]));
      const started = await a.start({ toolset: id, source: `import { n } from "tapedeck:tools";\nexport default async () => n.add({ x: 1 });` });
      if (started.kind !== "started") throw new Error("refused");
      const lost = assert.rejects(started.end, (error: unknown) => (error as { code?: unknown }).code === "lease_lost");
      await slow.heldCount(1);
      // A's lease lapses (its renewals never land); B's takeover scan takes the run and ends it.
      b = await base.reopen({ hostTools: fast.module(), leaseMs: 900 });
      const reader = b;
      await eventually("the node that took the run over to end it", async () => (await reader.getRun(started.runId)).status === "completed", 15_000);
      slow.release(0);
      await lost;
      const run = await b.getRun(started.runId);
      assert.equal(run.output, 2);
      assert.equal(run.hostFaults, undefined, "losing the lease is no fault of the host");
      const journal = await b.journal(started.runId);
      assert.equal(journal.filter((entry) => entry.kind === "call.completed").length, 1, "the old holder wrote nothing after it lost the run");
      assert.deepEqual(
        [...slow.calls, ...fast.calls].map((call) => call.key),
        [`${started.runId}/1`, `${started.runId}/1`],
        "sent again by the new holder with the same key",
      );
    } finally {
      await a.close();
      await b?.close();
      await base.cleanup();
    }
  });

  /**
   * Issue 22: runs stayed parked on `signal("go")` for good with the signal kept, unconsumed: its
   * request was lost with the holder that took it (requests were deleted before they were
   * applied). Taking a parked run over now looks for signals already kept for the one it waits on.
   */
  it("taking over a parked run wakes it when the signal it waits for was kept meanwhile, with no request left for it", async () => {
    const tools = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    const t = await testEngine({ hostTools: tools.module() });
    const path = join(t.dataDir, "tapedeck.db");
    try {
      const { id } = await t.engine.registerToolset(harnessToolset(["n.add"]));
      const source = `import { n } from "tapedeck:tools";\nexport default async () => n.add({ x: (await signal("go")) as number });`;
      const started = await t.engine.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error("refused");
      assert.equal((await t.engine.settled(started.runId))?.status, "waiting");
      await t.engine.close(); // gives its lease up: the next engine's first scan takes the run over
      // The signal is kept, and its request is gone (the holder that read it died before applying it).
      const raw = SqliteStore.open({ path, durability: "normal" });
      try {
        await raw.putSignal({ runId: started.runId, name: "go", payload: 41, at: Date.now() });
      } finally {
        await raw.close();
      }
      const next = await t.reopen({ hostTools: tools.module() });
      try {
        await eventually(
          "the engine that took the parked run over to wake it for its kept signal and end it",
          async () => (await next.getRun(started.runId)).status === "completed",
        );
        assert.equal((await next.getRun(started.runId)).output, 42);
      } finally {
        await next.close();
      }
    } finally {
      await t.cleanup();
    }
  });

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

  /**
   * Issue 22's last signal race (1 run in 600 under a CPU hog stayed parked on `signal("go")`
   * with the signal kept and a live holder): the node that kept the signal read the run with its
   * holder's lease looking lapsed, saw it `running`, and left nothing for the holder, whose
   * execution had already looked for kept signals and then parked on the wait for good. A signal
   * for a run another engine holds now always leaves it a request, however its lease looks.
   */
  it("a signal kept by a node that sees the live holder's lease as lapsed still reaches the holder's execution", async () => {
    const tools = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    tools.hold("n.add");
    const base = await testEngine({ wake: false });
    const path = join(base.dataDir, "tapedeck.db");
    const watched = watchedSignalReads(SqliteStore.open({ path, durability: "normal" }));
    const a = await base.reopen({ store: watched.store, hostTools: tools.module() });
    let b: Awaited<ReturnType<typeof base.reopen>> | undefined;
    try {
      const { id } = await a.registerToolset(harnessToolset(["n.add"]));
      const source = `import { n } from "tapedeck:tools";
export default async () => {
  const [sum, go] = await Promise.all([n.add({ x: 1 }), signal("go")]);
  return (sum as number) + (go as number);
};`;
      const started = await a.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error(`refused: ${JSON.stringify(started)}`);
      await tools.heldCount(1);
      await watched.looked; // the execution found no kept signal and waits for one
      b = await base.reopen({ store: staleLeaseReads(SqliteStore.open({ path, durability: "normal" })), hostTools: tools.module() });
      await b.signal(started.runId, "go", 40);
      tools.release(0);
      const holder = a;
      await eventually(
        "the holder's execution to take the signal kept by the other node and end the run",
        async () => (await holder.getRun(started.runId)).status === "completed",
        15_000,
      );
      assert.equal((await a.getRun(started.runId)).output, 42);
    } finally {
      await a.close();
      await b?.close();
      await base.cleanup();
    }
  });

  /**
   * Issue 22: "takeover of a live node's run happens only after its lease really lapsed". A node
   * whose read of a parked run showed its holder's lease lapsed claimed the run from that holder
   * by name, and the store gave it whatever the lease was. Now only a holder whose process on this
   * host is gone is taken by name; otherwise the store checks the lease at the claim.
   */
  it("a node that sees a live holder's lease as lapsed does not take its parked run: the holder is asked and goes on with it", async () => {
    const holderTools = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    const otherTools = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    const base = await testEngine({ wake: false });
    const path = join(base.dataDir, "tapedeck.db");
    const a = await base.reopen({ hostTools: holderTools.module() });
    let b: Awaited<ReturnType<typeof base.reopen>> | undefined;
    try {
      const { id } = await a.registerToolset(harnessToolset(["n.add"]));
      const source = `import { n } from "tapedeck:tools";\nexport default async () => n.add({ x: (await signal("go")) as number });`;
      const started = await a.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error("refused");
      assert.equal((await a.settled(started.runId))?.status, "waiting");
      b = await base.reopen({ store: staleLeaseReads(SqliteStore.open({ path, durability: "normal" })), hostTools: otherTools.module() });
      await b.signal(started.runId, "go", 41);
      const holder = a;
      await eventually("the holder to take the signal and end its run", async () => (await holder.getRun(started.runId)).status === "completed", 15_000);
      assert.equal((await a.getRun(started.runId)).output, 42);
      assert.deepEqual(
        { holder: holderTools.calls.length, other: otherTools.calls.length },
        { holder: 1, other: 0 },
        "the call was sent by the live holder, not by the node with the stale view",
      );
    } finally {
      await a.close();
      await b?.close();
      await base.cleanup();
    }
  });

  /**
   * The cancel's side of the stale view: a node that read the run with its live holder's lease
   * looking lapsed wrote the cancel itself, beside the holder's execution, whose next append then
   * lost to it (or the cancel to the holder's). A cancel of a run this engine does not hold now
   * claims it first, and the store, seeing the lease live, refuses: the holder is asked.
   */
  it("a cancel from a node that sees a live holder's lease as lapsed is carried out by the holder's execution", async () => {
    const tools = new ToolHarness({ "n.add": (a: { x: number }) => a.x + 1 });
    tools.hold("n.add");
    const base = await testEngine({ wake: false });
    const a = await base.reopen({ hostTools: tools.module() });
    let b: Awaited<ReturnType<typeof base.reopen>> | undefined;
    try {
      const { id } = await a.registerToolset(harnessToolset(["n.add"]));
      const started = await a.start({ toolset: id, source: `import { n } from "tapedeck:tools";\nexport default async () => n.add({ x: 1 });` });
      if (started.kind !== "started") throw new Error("refused");
      await tools.heldCount(1);
      const path = join(base.dataDir, "tapedeck.db");
      b = await base.reopen({ store: staleLeaseReads(SqliteStore.open({ path, durability: "normal" })), hostTools: tools.module() });
      assert.deepEqual(await b.cancel(started.runId, "stop it"), { status: "cancelled", reason: "stop it" });
      assert.deepEqual(await started.end, { status: "cancelled", reason: "stop it" }, "the holder's execution ended the run as cancelled");
      tools.release(0);
      const run = await a.getRun(started.runId);
      assert.equal(run.status, "cancelled");
      assert.equal(run.hostFaults, undefined, "no write of either node was lost to the other");
      const journal = await a.journal(started.runId);
      assert.equal(journal.filter((entry) => entry.kind === "run.cancelled").length, 1, "one end, written by the holder");
    } finally {
      await a.close();
      await b?.close();
      await base.cleanup();
    }
  });
});
