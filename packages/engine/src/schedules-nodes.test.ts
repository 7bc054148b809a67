// Two engines firing one store's schedules in the background (`fireSchedules`), on one manual
// clock: both race for each fire, one of them is stopped across fire times, then both are, and
// the one that comes back catches up. Each fire time starts exactly one run, whose idempotency
// key is the fire's. On a SQLite file opened twice, and on PostgreSQL when it is given.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import type { Engine } from "./engine.js";
import type { EngineEvent } from "./runs/engine-events.js";
import { fireKey, SCHEDULE_LABEL } from "./schedules/fire-key.js";
import { describeWithPostgres, postgresStoreFactory } from "./store/contracts/postgres-test-database.js";
import { SqliteStore } from "./store/sqlite-store.js";
import type { Store } from "./store/store.js";
import { ManualClock } from "./test-support/manual-clock.js";
import { testEngine } from "./test-support/engines.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";

const MINUTE = 60_000;

interface Stores {
  /** A new store on the same data, as another process would open it. */
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

function twoNodes(name: string, stores: () => Promise<Stores>): void {
  it(`${name}: two firing engines, one stopped across fire times, then both: each fire time starts exactly one run`, async () => {
    const data = await stores();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const harness = new ToolHarness({ "w.step": () => ({ ok: true }) });
    const fired: (EngineEvent & { type: "schedule.fired" })[] = [];
    const waiters: { at: number; resolve: () => void }[] = [];
    const listen = (engine: Engine): void => {
      engine.on((event) => {
        if (event.type !== "schedule.fired") return;
        fired.push(event);
        for (const waiter of waiters.filter((w) => w.at === event.fireAt)) waiter.resolve();
      });
    };
    /**
     * Moves the clock and lets every engine up pass: each also fires on its own timer, but one
     * armed while the test moved the manual clock would be armed past the tick. Explicit passes
     * racing the background ones are what two nodes do anyway.
     */
    const tick = async (ms: number): Promise<void> => {
      clock.tick(ms);
      await Promise.all([a, b].flatMap((engine) => (engine === undefined ? [] : [engine.schedules.fireDue()])));
    };
    /** Resolves once some engine said what became of the fire at `at` (an event, not a poll). */
    const firedAt = (at: number): Promise<void> =>
      fired.some((event) => event.fireAt === at) ? Promise.resolve() : new Promise((resolve) => waiters.push({ at, resolve }));
    const t = await testEngine({ store: await data.open(), hostTools: harness.module(), clock, fireSchedules: true });
    const node = (): Promise<Engine> => data.open().then((store) => t.reopen({ store, hostTools: harness.module(), clock, fireSchedules: true }));
    let a: Engine | undefined = t.engine;
    let b: Engine | undefined = await node();
    listen(a);
    listen(b);
    try {
      const { id: toolset } = await a.registerToolset(harnessToolset(["w.step"]));
      const created = await a.schedules.create({ toolset, source: `export default async () => 1;`, everyMs: MINUTE, overlap: "allow", catchup: "all" });
      assert.equal(created.kind, "created");
      if (created.kind !== "created") return;
      const id = created.schedule.id;
      const start = clock.now();
      const times = [1, 2, 3, 4, 5, 6].map((n) => start + n * MINUTE);

      // Both up: they race for the first two fires.
      for (const at of times.slice(0, 2)) {
        await tick(MINUTE);
        await firedAt(at);
      }
      // B stops (cleanly) across two fires: A alone fires them.
      await b.close();
      b = undefined;
      for (const at of times.slice(2, 4)) {
        await tick(MINUTE);
        await firedAt(at);
      }
      // Every node down across two fires; B comes back and catches both up (catchup all), then A too.
      await a.close();
      a = undefined;
      clock.tick(2 * MINUTE);
      b = await node();
      listen(b);
      await tick(0);
      await firedAt(times[4]!);
      await firedAt(times[5]!);
      a = await node();
      listen(a);
      // One more fire with both up again.
      const last = start + 7 * MINUTE;
      await tick(MINUTE);
      await firedAt(last);
      times.push(last);

      const outcomes = await b.schedules.fires(id, { limit: 100 });
      assert.deepEqual(
        outcomes.map((fire) => fire.fireAt).sort((x, y) => x - y),
        times,
        "one fire row per time",
      );
      assert.ok(outcomes.every((fire) => fire.state === "started"));
      const runs = await b.listRuns({ labels: { [SCHEDULE_LABEL]: id }, limit: 100 });
      assert.equal(runs.length, times.length, "one run per fire time");
      assert.deepEqual(runs.map((run) => run.idempotencyKey).sort(), times.map((at) => fireKey(id, at)).sort());
      // Said once per fire, whichever engine fired it.
      assert.equal(fired.filter((event) => event.state === "started").length, times.length);
    } finally {
      await a?.close();
      await b?.close();
      await data.cleanup();
    }
  });
}

twoNodes("SQLite file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tapedeck-schedule-nodes-"));
  const opened: SqliteStore[] = [];
  return {
    open: () => {
      const store = SqliteStore.open({ path: join(dir, "tapedeck.db"), durability: "normal" });
      opened.push(store);
      return Promise.resolve(store);
    },
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describeWithPostgres("PostgreSQL", (url) => {
  twoNodes("PostgreSQL", async () => {
    const opened = await postgresStoreFactory(url)();
    let first = true;
    return {
      open: async () => {
        if (!first) return opened.peer!();
        first = false;
        return opened.store;
      },
      cleanup: () => opened.cleanup(),
    };
  });
});
