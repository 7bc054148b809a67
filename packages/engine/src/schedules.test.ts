// Schedules through the engine: on a manual clock (no sleeps), in an IANA zone, two engines on
// one store firing the same due time start one run.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "./test-support/manual-clock.js";
import { testEngine } from "./test-support/engines.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { fireKey } from "./schedules/fire-key.js";

test("a cron schedule in America/New_York fires at 09:00 local, once across two engines", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const harness = new ToolHarness({ "w.step": () => ({ ok: true }) });
  const t = await testEngine({ hostTools: harness.module(), clock });
  try {
    const { id } = await t.engine.registerToolset(harnessToolset(["w.step"]));
    const created = await t.engine.schedules.create({ toolset: id, source: `export default async () => 1;`, cron: "0 9 * * *", timezone: "America/New_York" });
    assert.equal(created.kind, "created", JSON.stringify(created));
    if (created.kind !== "created") return;
    // 09:00 EST is 14:00 UTC.
    assert.equal(created.schedule.upcoming[0], Date.UTC(2026, 0, 1, 14));
    assert.deepEqual(await t.engine.schedules.fireDue(), []);
    clock.tick(2 * 3_600_000 + 1_000);
    const other = await t.reopen({ hostTools: harness.module(), clock });
    try {
      const [first, second] = await Promise.all([t.engine.schedules.fireDue(), other.schedules.fireDue()]);
      const started = [...first, ...second].filter((outcome) => outcome.state === "started");
      assert.equal(started.length, 1);
      assert.equal(started[0]?.fireAt, Date.UTC(2026, 0, 1, 14));
      const run = await t.engine.getRun(started[0].runId!);
      assert.equal(run.idempotencyKey, fireKey(created.schedule.id, Date.UTC(2026, 0, 1, 14)));
      assert.equal((await t.engine.schedules.get(created.schedule.id)).nextFireAt, Date.UTC(2026, 0, 2, 14));
    } finally {
      await other.close();
    }
  } finally {
    await t.cleanup();
  }
});
