/**
 * What OpenTelemetry costs a run when no tracer provider is registered (the default: no
 * `OTEL_*` exporter configured): the hooks a call goes through (`telemetry/run-telemetry.ts`:
 * the run's no-op telemetry, the metrics' listener check) against the same loop without them,
 * next to a call's whole overhead in the engine, measured in the same run. The goal is the
 * issue's: nothing measurable.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import type { JournalEntry, PinnedTool } from "@tapedeck/protocol";
import { Engine } from "../engine.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import { openStore } from "../store/open-store.js";
import { observed } from "../telemetry/engine-observers.js";
import { NO_TELEMETRY, startRunTelemetry, type CallTelemetry, type RunTelemetry } from "../telemetry/run-telemetry.js";
import type { Row } from "./measure.js";

const TOOL = { group: "t", name: "echo", source: "host", description: "", inputSchema: { type: "object" }, policy: {} } as unknown as PinnedTool;
const ENTRIES: JournalEntry[] = [{ kind: "run.started", index: 0, at: 0, input: null, replayVersion: 1 }];
const RUN = { id: "run_bench", toolsetId: "ts_bench" };

/** Per call, ns: the loop with the dispatcher's telemetry hooks, and without. */
function hookNs(telemetry: RunTelemetry, calls: number): { hooked: number; bare: number } {
  let sink = 0;
  const bare = () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) sink += i & 1;
    return Number(process.hrtime.bigint() - start) / calls;
  };
  const hooked = () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) {
      // What `RunDispatcher.dispatch` and its attempts do for a call, telemetry-wise.
      const call: CallTelemetry | undefined = telemetry.call(i, TOOL, "key", 1);
      const since = observed() ? performance.now() : undefined;
      call?.attempt(1);
      if (call !== undefined || since !== undefined) sink--;
      sink += i & 1;
    }
    return Number(process.hrtime.bigint() - start) / calls;
  };
  const best = (fn: () => number) => Math.min(...Array.from({ length: 7 }, fn));
  best(bare);
  best(hooked); // warm the JIT
  const result = { hooked: best(hooked), bare: best(bare) };
  if (sink === -1) console.log(sink);
  return result;
}

/** The engine's per-call overhead, ms: a sequential run of echo calls, steady state. */
async function enginePerCallMs(calls: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-"));
  const engine = await Engine.open({
    store: await openStore(dir, { durability: "full" }),
    sources: { host: new InProcessHostTools({ t: { echo: (args: unknown) => Promise.resolve(args) } }) },
    limits: { maxJournalEntries: 1_000_000, sandbox: { cpuMsPerStep: 60_000 } },
  });
  try {
    const { id } = await engine.registerToolset({ hostTools: { t: { echo: { description: "Echo.", inputSchema: { type: "object" } } } } });
    const source = `import { t } from "tapedeck:tools";\nexport default async () => { for (let i = 0; i < ${calls}; i++) await t.echo({ i }); return 0; };`;
    let ms = Infinity;
    for (let round = 0; round < 3; round++) {
      const started = await engine.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error("refused");
      const begin = performance.now();
      await started.end;
      ms = Math.min(ms, (performance.now() - begin) / calls);
    }
    return ms;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function telemetryCost(rows: Row[]): Promise<void> {
  // The API's global provider, unless something registered one: the bench runs without.
  trace.disable();
  const telemetry = startRunTelemetry(RUN, ENTRIES, undefined);
  if (telemetry !== NO_TELEMETRY) throw new Error("with no tracer provider, a run's telemetry must be the no-op one");
  const { hooked, bare } = hookNs(telemetry, 2_000_000);
  const perCallNs = (await enginePerCallMs(500)) * 1e6;
  rows.push({
    name: "OTel, no tracer provider: telemetry hooks per call (over the same loop without them)",
    value: Math.max(0, hooked - bare),
    unit: "ns",
    baselineName: "the engine's whole per-call overhead (steady, full)",
    baseline: perCallNs,
    goal: "≤ 0.001× (nothing measurable)",
  });
  const runs = 20_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) startRunTelemetry(RUN, ENTRIES, undefined);
  rows.push({
    name: "OTel, no tracer provider: a run's no-op span, per execution",
    value: Number(process.hrtime.bigint() - start) / runs,
    unit: "ns",
    baselineName: "the engine's whole per-call overhead (steady, full)",
    baseline: perCallNs,
    goal: "(context: once per execution)",
  });
}
