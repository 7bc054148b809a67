// Schedules' time zones and overlap policies through the engine, on a manual clock (no sleeps):
// in Europe/Berlin a fixed-time cron fires once on the day its hour is skipped and once on the day
// it is repeated; each overlap policy does what it says while a fire's run waits for a signal.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Engine } from "./engine.js";
import type { FireOutcome } from "./schedules/schedule-firer.js";
import { SCHEDULE_LABEL } from "./schedules/fire-key.js";
import { ManualClock } from "./test-support/manual-clock.js";
import { testEngine } from "./test-support/engines.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";

const HOUR = 3_600_000;
const QUICK = `export default async () => 1;`;
const WAITS = `export default async () => await signal("go");`;

/** The Berlin wall-clock time of an instant, "YYYY-MM-DD HH:MM". */
function berlin(at: number): string {
  return new Intl.DateTimeFormat("sv-SE", { timeZone: "Europe/Berlin", dateStyle: "short", timeStyle: "short" }).format(at);
}

/**
 * Fires what is due at each step of `step` ms from now until `until`, collecting the outcomes.
 * The zone tests use overlap `allow`: a run still executing in real time when the manual clock
 * moves on would make the next fire skipped, which is not what they test.
 */
async function fireThrough(engine: Engine, clock: ManualClock, until: number, step: number): Promise<FireOutcome[]> {
  const outcomes: FireOutcome[] = [];
  while (clock.now() < until) {
    clock.tick(step);
    outcomes.push(...(await engine.schedules.fireDue()));
  }
  return outcomes;
}

async function withEngine(start: number, work: (engine: Engine, clock: ManualClock, toolset: string) => Promise<void>): Promise<void> {
  const clock = new ManualClock(start);
  const harness = new ToolHarness({ "w.step": () => ({ ok: true }) });
  const t = await testEngine({ hostTools: harness.module(), clock });
  try {
    const { id } = await t.engine.registerToolset(harnessToolset(["w.step"]));
    await work(t.engine, clock, id);
  } finally {
    await t.cleanup();
  }
}

async function created(engine: Engine, options: Parameters<Engine["schedules"]["create"]>[0]): Promise<string> {
  const result = await engine.schedules.create(options);
  assert.equal(result.kind, "created", JSON.stringify(result));
  return result.kind === "created" ? result.schedule.id : "";
}

describe("schedules in a time zone with daylight saving time (Europe/Berlin)", () => {
  it("02:30 every day fires once on the day 02:00-03:00 is skipped (29 March 2026), at the first time after the gap", async () => {
    await withEngine(Date.UTC(2026, 2, 27, 12), async (engine, clock, toolset) => {
      await created(engine, { toolset, source: QUICK, cron: "30 2 * * *", timezone: "Europe/Berlin", overlap: "allow" });
      const fired = (await fireThrough(engine, clock, Date.UTC(2026, 2, 31, 12), 15 * 60_000)).filter((o) => o.state === "started");
      assert.deepEqual(
        fired.map((o) => berlin(o.fireAt)),
        ["2026-03-28 02:30", "2026-03-29 03:00", "2026-03-30 02:30", "2026-03-31 02:30"],
      );
    });
  });

  it("02:30 every day fires once on the day 02:00-03:00 is repeated (25 October 2026), at its first pass", async () => {
    await withEngine(Date.UTC(2026, 9, 23, 12), async (engine, clock, toolset) => {
      await created(engine, { toolset, source: QUICK, cron: "30 2 * * *", timezone: "Europe/Berlin", overlap: "allow" });
      const fired = (await fireThrough(engine, clock, Date.UTC(2026, 9, 27, 12), 15 * 60_000)).filter((o) => o.state === "started");
      assert.deepEqual(
        fired.map((o) => berlin(o.fireAt)),
        ["2026-10-24 02:30", "2026-10-25 02:30", "2026-10-26 02:30", "2026-10-27 02:30"],
      );
      // The first pass of the repeated hour: 02:30 CEST, 00:30 UTC.
      assert.equal(fired[1]!.fireAt, Date.UTC(2026, 9, 25, 0, 30));
    });
  });

  it("an hourly cron fires in real time: 23 fires on the short day, 25 on the long one", async () => {
    for (const [day, count] of [
      [Date.UTC(2026, 2, 28, 23), 23],
      [Date.UTC(2026, 9, 24, 22), 25],
    ] as const) {
      await withEngine(day - 1, async (engine, clock, toolset) => {
        await created(engine, { toolset, source: QUICK, cron: "0 * * * *", timezone: "Europe/Berlin", overlap: "allow" });
        // From local midnight (included) to the next local midnight (excluded).
        const next = day + count * HOUR;
        const fired = (await fireThrough(engine, clock, next - 1, 10 * 60_000)).filter((o) => o.state === "started");
        assert.equal(fired.length, count, fired.map((o) => berlin(o.fireAt)).join(", "));
        assert.equal(new Set(fired.map((o) => o.fireAt)).size, count);
      });
    }
  });
});

describe("schedule overlap policies, while a fire's run waits for a signal", () => {
  async function overlapping(
    overlap: "skip" | "buffer_one" | "allow" | "cancel_previous",
    work: (engine: Engine, clock: ManualClock, scheduleId: string, first: FireOutcome) => Promise<void>,
  ): Promise<void> {
    await withEngine(Date.UTC(2026, 0, 1), async (engine, clock, toolset) => {
      const id = await created(engine, { toolset, source: WAITS, everyMs: 60_000, overlap });
      clock.tick(60_000);
      const [first] = await engine.schedules.fireDue();
      assert.equal(first?.state, "started");
      assert.equal((await engine.settled(first.runId!))?.status, "waiting");
      await work(engine, clock, id, first);
    });
  }

  const next = async (engine: Engine, clock: ManualClock): Promise<FireOutcome> => {
    clock.tick(60_000);
    const outcomes = await engine.schedules.fireDue();
    assert.equal(outcomes.length, 1, JSON.stringify(outcomes));
    return outcomes[0]!;
  };

  it("skip: a fire due while the run waits is skipped, saying which run; the next after it ends starts", async () => {
    await overlapping("skip", async (engine, clock, _id, first) => {
      const skipped = await next(engine, clock);
      assert.equal(skipped.state, "skipped");
      assert.match(skipped.reason!, new RegExp(`${first.runId}.*overlap: skip`));
      await engine.signal(first.runId!, "go", 1);
      assert.equal((await engine.settled(first.runId!))?.status, "completed");
      assert.equal((await next(engine, clock)).state, "started");
    });
  });

  it("buffer_one: one fire waits and starts when the run ends; a further one is skipped", async () => {
    await overlapping("buffer_one", async (engine, clock, id, first) => {
      const buffered = await next(engine, clock);
      assert.equal(buffered.state, "buffered");
      const third = await next(engine, clock);
      assert.equal(third.state, "skipped");
      await engine.signal(first.runId!, "go", 1);
      assert.equal((await engine.settled(first.runId!))?.status, "completed");
      const [started] = await engine.schedules.fireDue();
      assert.deepEqual([started?.fireAt, started?.state], [buffered.fireAt, "started"]);
      const fires = await engine.schedules.fires(id);
      assert.deepEqual(
        fires.map((f) => f.state),
        ["skipped", "started", "started"],
      );
    });
  });

  it("allow: every fire starts a run, whatever runs", async () => {
    await overlapping("allow", async (engine, clock, id, first) => {
      const second = await next(engine, clock);
      assert.equal(second.state, "started");
      assert.notEqual(second.runId, first.runId);
      const runs = await engine.listRuns({ labels: { [SCHEDULE_LABEL]: id }, limit: 10 });
      assert.equal(runs.length, 2);
    });
  });

  it("cancel_previous: the waiting run is cancelled, naming the fire, and the new fire's run starts", async () => {
    await overlapping("cancel_previous", async (engine, clock, _id, first) => {
      const second = await next(engine, clock);
      assert.equal(second.state, "started");
      const cancelled = await engine.getRun(first.runId!);
      assert.equal(cancelled.status, "cancelled");
      assert.equal((await engine.getRun(second.runId!)).status === "cancelled", false);
    });
  });
});
