/**
 * Records the golden journals in packages/engine/golden/. Run it only when adding a golden
 * journal or bumping REPLAY_VERSION: `node packages/engine/dist-test/test-support/make-golden.js`.
 * Existing files are the contract; never regenerate them to make a failing test pass.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ToolsetSpec } from "@tapedeck/protocol";
import { Engine } from "../engine.js";
import { REPLAY_VERSION } from "../runs/history.js";
import { SqliteStore } from "../store/sqlite-store.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import type { GoldenJournal } from "./golden.js";
import { harnessToolset, ToolHarness } from "./tool-harness.js";

const DIR = fileURLToPath(new URL("../../golden/", import.meta.url));

interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly spec: ToolsetSpec;
  readonly tools: Record<string, (args: never) => unknown>;
  readonly source: string;
  readonly input?: unknown;
  /** Drives the held calls, in the order the scenario wants them to complete. */
  readonly drive?: (tools: ToolHarness) => Promise<void>;
  readonly hold?: readonly string[];
}

const scenarios: Scenario[] = [
  {
    name: "sequential-date-random-logs",
    description: "Sequential calls, a loop, Date.now and Math.random, and log lines.",
    spec: harnessToolset(["kv.get", "kv.put"]),
    tools: { "kv.get": (a: { k: string }) => ({ k: a.k, v: a.k.length }), "kv.put": () => ({ ok: true }) },
    source: `import { kv } from "tapedeck:tools";
export default async function (input: { keys: string[] }) {
  const seen: number[] = [];
  for (const k of input.keys) {
    const got = (await kv.get({ k })) as { v: number };
    seen.push(got.v);
    console.log("got", k, got.v);
  }
  const r = Math.floor(Math.random() * 1000);
  await kv.put({ k: "total", v: seen.reduce((a, b) => a + b, 0) + r });
  return { seen, r, t: new Date().toISOString() };
}`,
    input: { keys: ["a", "bb", "ccc"] },
  },
  {
    name: "concurrent-race-out-of-order",
    description: "Promise.all and Promise.race over calls that complete out of issue order.",
    spec: harnessToolset(["svc.fetch"]),
    tools: { "svc.fetch": (a: { id: number }) => ({ id: a.id, at: a.id * 11 }) },
    hold: ["svc.fetch"],
    drive: async (tools) => {
      await tools.heldCount(3);
      tools.release(2);
      await tools.heldCount(2);
      tools.release(0);
      tools.release(0);
      await tools.heldCount(2);
      tools.release(1);
      tools.release(0);
    },
    source: `import { svc } from "tapedeck:tools";
export default async () => {
  const order: number[] = [];
  const calls = [1, 2, 3].map((id) => svc.fetch({ id }).then((r) => { order.push(id); return r; }));
  const first = await Promise.race(calls);
  const all = await Promise.all(calls);
  const [x, y] = await Promise.all([svc.fetch({ id: 4 }), svc.fetch({ id: 5 })]);
  return { first, all, order, x, y };
};`,
  },
  {
    name: "errors-caught-and-rejected",
    description: "A tool error caught by the script, arguments refused by the schema, then an uncaught error.",
    spec: {
      hostTools: {
        pay: {
          charge: { description: "Charge.", inputSchema: { type: "object", properties: { cents: { type: "integer" } }, required: ["cents"] } },
        },
      },
    },
    tools: {
      "pay.charge": (a: { cents: number }) => {
        if (a.cents > 100) throw new Error("over the limit");
        return { charged: a.cents };
      },
    },
    source: `import { pay, ToolError } from "tapedeck:tools";
export default async () => {
  const results: unknown[] = [];
  try { await pay.charge({ cents: 500 }); } catch (e) { results.push((e as ToolError).code); }
  try { await pay.charge(JSON.parse('{"cents":"ten"}')); } catch (e) { results.push((e as ToolError).code); }
  results.push(await pay.charge({ cents: 5 }));
  if (results.length === 3) throw new Error("done with " + JSON.stringify(results));
  return results;
};`,
  },
];

async function record(scenario: Scenario): Promise<GoldenJournal> {
  const tools = new ToolHarness(scenario.tools);
  for (const tool of scenario.hold ?? []) tools.hold(tool);
  const engine = await Engine.open({ store: SqliteStore.open({ path: ":memory:" }), sources: { host: new InProcessHostTools(tools.module()) } });
  try {
    const { id, toolset } = await engine.registerToolset(scenario.spec);
    const started = await engine.start({ toolset: id, source: scenario.source, ...(scenario.input === undefined ? {} : { input: scenario.input as never }) });
    if (started.kind !== "started") throw new Error(`${scenario.name} refused`);
    await scenario.drive?.(tools);
    await started.end;
    const run = await engine.getRun(started.runId);
    const journal = await engine.journal(run.id, 0, 100_000);
    return {
      description: scenario.description,
      replayVersion: REPLAY_VERSION,
      toolset,
      run: { id: run.id, source: run.source, js: run.js, sourceMap: run.sourceMap, input: run.input, createdAt: run.createdAt },
      journal,
    };
  } finally {
    await engine.close();
  }
}

mkdirSync(DIR, { recursive: true });
for (const scenario of scenarios) {
  const file = `${DIR}v${REPLAY_VERSION}-${scenario.name}.json`;
  if (existsSync(file)) {
    console.log(`kept ${file}`);
    continue;
  }
  writeFileSync(file, `${JSON.stringify(await record(scenario), null, 2)}\n`);
  console.log(`wrote ${file}`);
}
