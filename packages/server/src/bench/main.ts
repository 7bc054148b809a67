/**
 * `npm run bench:server`: the server's costs, each against a baseline measured in the same run.
 *
 * - A 10-call script started and followed to its end through HTTP (`runs.start`, then
 *   `runs.get` holding until it ends) vs the same through the embedded client (no socket).
 * - A host tool call served by an SDK worker through the long poll (claim, answer) vs the same
 *   tool in the server's process, per call of a sequential script.
 *
 * Both sides run in this process on fresh data folders, durability `full` (the default).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine, InProcessHostTools } from "@tapedeck/engine";
import { Tapedeck } from "@tapedeck/sdk";
import { openEmbedded } from "../embedded/embedded.js";
import { startServer } from "../runtime/start-server.js";
import { median, printTable, time, type Row } from "@tapedeck/engine/bench/measure";

const TOOLSET = { hostTools: { t: { echo: { description: "Echo.", inputSchema: { type: "object" } } } } };
const echo = { t: { echo: (args: unknown) => args } };

function sequential(calls: number): string {
  return `import { t } from "tapedeck:tools";\nexport default async () => { let n = 0; for (let i = 0; i < ${calls}; i++) { await t.echo({ i }); n++; } return n; };`;
}

/** Starts `source` and holds until it ends: one start, one held get. */
async function startAndFinish(td: Tapedeck, toolset: string, source: string): Promise<void> {
  const started = await td.runs.start({ toolset, source });
  if (started.kind !== "started") throw new Error("refused");
  const run = await td.runs.get(started.run.id, { wait: 60 });
  if (run.status !== "completed") throw new Error(`the run ended ${run.status}: ${JSON.stringify(run.error)}`);
}

async function withFolder<T>(fn: (dataDir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-server-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The median of `runs` timings after `warmup` untimed ones. */
async function sample(runs: number, warmup: number, fn: () => Promise<void>): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await time(fn));
  return median(samples);
}

const silent = (): void => {};

async function httpVsEmbedded(rows: Row[]): Promise<void> {
  const source = sequential(10);
  const http = await withFolder(async (dataDir) => {
    const server = await startServer({ port: 0, dataDir, hostTools: echo, log: silent });
    try {
      const td = new Tapedeck({ baseUrl: server.url, apiKey: server.adminKey! });
      const { id } = await td.toolsets.create(TOOLSET);
      return await sample(50, 20, () => startAndFinish(td, id, source));
    } finally {
      await server.close();
    }
  });
  const inProcess = await withFolder(async (dataDir) => {
    // What `Tapedeck.embedded` does: the SDK's client over the in-process connection.
    const connection = await openEmbedded({ dataDir, hostTools: echo });
    try {
      const td = new Tapedeck({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, fetch: connection.fetch });
      const { id } = await td.toolsets.create(TOOLSET);
      return await sample(50, 20, () => startAndFinish(td, id, source));
    } finally {
      await connection.close();
    }
  });
  const engineAlone = await withFolder(async (dataDir) => {
    const engine = await Engine.open({ store: dataDir, sources: { host: new InProcessHostTools(echo) } });
    try {
      const { id } = await engine.registerToolset(TOOLSET);
      return await sample(50, 20, async () => {
        const started = await engine.start({ toolset: id, source });
        if (started.kind !== "started" || (await started.end).status !== "completed") throw new Error("the run did not complete");
      });
    } finally {
      await engine.close();
    }
  });
  rows.push({
    name: "10-call script, start → end, through HTTP (p50)",
    value: http,
    unit: "ms",
    baselineName: "embedded client (no socket)",
    baseline: inProcess,
    goal: "(context)",
  });
  rows.push({
    name: "10-call script, start → end, embedded client (p50)",
    value: inProcess,
    unit: "ms",
    baselineName: "the engine called directly",
    baseline: engineAlone,
    goal: "(context)",
  });
}

async function longPollVsInProcess(rows: Row[]): Promise<void> {
  const calls = 200;
  const source = sequential(calls);
  const perCall = (hostTools: typeof echo | undefined) =>
    withFolder(async (dataDir) => {
      const server = await startServer({ port: 0, dataDir, log: silent, ...(hostTools ? { hostTools } : {}) });
      const td = new Tapedeck({ baseUrl: server.url, apiKey: server.adminKey! });
      const worker = hostTools ? undefined : td.worker({ tools: { t: { echo: (args: unknown) => args } } }).start();
      try {
        const { id } = await td.toolsets.create(TOOLSET);
        return (await sample(5, 2, () => startAndFinish(td, id, source))) / calls;
      } finally {
        await worker?.stop();
        await server.close();
      }
    });
  const longPoll = await perCall(undefined);
  const local = await perCall(echo);
  rows.push({
    name: `host tool call through an SDK worker's long poll, per call (${calls} sequential)`,
    value: longPoll,
    unit: "ms",
    baselineName: "the tool in the server's process",
    baseline: local,
    goal: "(context)",
  });
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const only = process.argv[2];
  if (!only || only === "http") await httpVsEmbedded(rows);
  if (!only || only === "workers") await longPollVsInProcess(rows);
  printTable(rows);
}

await main();
