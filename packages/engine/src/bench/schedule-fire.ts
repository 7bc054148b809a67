import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../engine.js";
import { openStore } from "../store/open-store.js";
import { percentile, time, type Row } from "./measure.js";

/**
 * `npm run bench -- schedules`: a schedule's fire latency, from its due time to its run started
 * (the `schedule.fired` event), on the system clock, in an engine that fires in the background
 * (`fireSchedules`, as `tapedeck serve`), durability normal: `SCHEDULES` interval schedules of a
 * second each, until `FIRES` fires started. Baseline: starting the same script with
 * `engine.start` directly (what a fire does once claimed).
 */
const SCHEDULES = 10;
const FIRES = 60;
const SOURCE = `export default async () => 1;`;

export async function scheduleFire(rows: Row[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-schedules-"));
  const engine = await Engine.open({ store: await openStore(dir, { durability: "normal" }), fireSchedules: true });
  try {
    const { id } = await engine.registerToolset({});
    // The first starts load and warm the type-checker (seconds): not counted.
    for (let i = 0; i < 5; i++) await engine.start({ toolset: id, source: SOURCE });
    const starts: number[] = [];
    for (let i = 0; i < 20; i++) starts.push(await time(() => engine.start({ toolset: id, source: SOURCE })));
    const latencies: number[] = [];
    const done = new Promise<void>((resolve) => {
      engine.on((event) => {
        if (event.type !== "schedule.fired" || event.state !== "started") return;
        latencies.push(Date.now() - event.fireAt);
        if (latencies.length === FIRES) resolve();
      });
    });
    for (let i = 0; i < SCHEDULES; i++) {
      const created = await engine.schedules.create({ toolset: id, source: SOURCE, everyMs: 1_000, overlap: "allow", startAt: Date.now() + 1_000 + i * 100 });
      if (created.kind !== "created") throw new Error(`refused: ${created.problems.join("; ")}`);
    }
    await done;
    for (const [p, name] of [
      [50, "p50"],
      [95, "p95"],
    ] as const) {
      rows.push({
        name: `schedule fire latency ${name} (due → run started, ${SCHEDULES} schedules every 1 s)`,
        value: percentile(latencies, p),
        unit: "ms",
        baselineName: `engine.start of the same script, ${name}`,
        baseline: percentile(starts, p),
        goal: "report",
      });
    }
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
