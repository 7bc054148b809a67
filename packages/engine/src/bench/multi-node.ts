/**
 * `npm run bench -- nodes`: durable calls per second with 100 concurrent runs on SQLite (one
 * node), PostgreSQL (one node) and PostgreSQL (two nodes, each a process of its own running half
 * of the runs); and, on the same PostgreSQL, the cost per step of a DBOS Transact workflow of N
 * steps against a Tapedeck script of N calls. PostgreSQL comes from TAPEDECK_BENCH_POSTGRES_URL
 * (else TAPEDECK_TEST_POSTGRES_URL): `bash scripts/pg-cluster.sh run npm run bench -- nodes`;
 * without one the PostgreSQL rows are left out, saying so.
 *
 * The load average is printed with the table: on a machine of two shared cores two nodes cannot
 * add CPU, so the two-node ratio says how well nodes share one database, not scale-out.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { Engine } from "../engine.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import { median, time, type Row } from "./measure.js";

const CHILD = fileURLToPath(new URL("./store-node-child.js", import.meta.url));
/** The load: 100 runs at once, 20 calls each. */
const CONCURRENT_RUNS = 100;
const CALLS_PER_RUN = 20;
/** Measured rounds per configuration (the median is shown). */
const ROUNDS = 3;
/** Steps of the DBOS workflow and calls of the Tapedeck script compared step for step. */
const STEPS = 100;

function postgresUrl(): string | undefined {
  return process.env.TAPEDECK_BENCH_POSTGRES_URL ?? process.env.TAPEDECK_TEST_POSTGRES_URL;
}

function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("schema", schema);
  return parsed.toString();
}

async function dropSchemas(url: string, schemas: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A node process, ready (its warm-up run done). */
interface Node {
  go(): Promise<number>;
}

async function startNode(store: string, runs: number): Promise<Node> {
  const child = spawn(process.execPath, [CHILD, store, String(runs), String(CALLS_PER_RUN)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      lines.once("line", resolve);
      child.once("exit", (code) => reject(new Error(`a benchmark node exited (${code})`)));
    });
  const ready = await next();
  if (ready !== "ready") throw new Error(`a benchmark node said ${ready}`);
  return {
    go: async () => {
      const done = next();
      child.stdin.write("go\n");
      const { ms } = JSON.parse(await done) as { ms: number };
      await new Promise((resolve) => child.once("exit", resolve));
      return ms;
    },
  };
}

/** Durable calls per second of `nodes` processes on `store` sharing CONCURRENT_RUNS runs, all started at once (median of ROUNDS). */
async function callsPerSecond(store: () => string, nodes: number): Promise<number> {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const location = store();
    const started = await Promise.all(Array.from({ length: nodes }, () => startNode(location, CONCURRENT_RUNS / nodes)));
    const begin = performance.now();
    await Promise.all(started.map((node) => node.go()));
    rates.push((CONCURRENT_RUNS * CALLS_PER_RUN) / ((performance.now() - begin) / 1000));
  }
  return median(rates);
}

export async function multiNode(rows: Row[]): Promise<void> {
  const folders: string[] = [];
  const sqlite = await callsPerSecond(() => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-nodes-"));
    folders.push(dir);
    return dir;
  }, 1);
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  const url = postgresUrl();
  if (url === undefined) {
    console.log("nodes: PostgreSQL rows left out: set TAPEDECK_BENCH_POSTGRES_URL (or run under scripts/pg-cluster.sh run)");
    rows.push({
      name: "durable calls/s, 100 runs × 20 calls, SQLite, one node",
      value: sqlite,
      unit: "calls/s",
      baselineName: "itself",
      baseline: sqlite,
      goal: "(context)",
    });
    return;
  }
  const schemas: string[] = [];
  const fresh = (): string => {
    const schema = `bench_${randomBytes(6).toString("hex")}`;
    schemas.push(schema);
    return withSchema(url, schema);
  };
  try {
    const one = await callsPerSecond(fresh, 1);
    const two = await callsPerSecond(fresh, 2);
    const load = loadavg()
      .map((n) => n.toFixed(1))
      .join(" ");
    rows.push({
      name: "durable calls/s, 100 runs × 20 calls, SQLite, one node",
      value: sqlite,
      unit: "calls/s",
      baselineName: "PostgreSQL, one node",
      baseline: one,
      goal: "(context)",
    });
    rows.push({
      name: "durable calls/s, 100 runs × 20 calls, PostgreSQL, one node",
      value: one,
      unit: "calls/s",
      baselineName: "SQLite, one node",
      baseline: sqlite,
      goal: "(context)",
    });
    rows.push({
      name: `durable calls/s, 100 runs × 20 calls, PostgreSQL, two nodes (load average ${load})`,
      value: two,
      unit: "calls/s",
      baselineName: "PostgreSQL, one node",
      baseline: one,
      goal: "≥ 1.6× one node",
    });
    await dbosVsTapedeck(rows, url, fresh);
  } finally {
    await dropSchemas(url, schemas);
  }
}

/**
 * What one more step costs, as the slope between a workflow of no steps and one of `STEPS`
 * (medians of `ROUNDS`): starting a workflow (for Tapedeck a type check and a sandbox) is not a
 * step, and would otherwise be spread over the steps of whichever side starts slower.
 */
async function perStep(workflow: (steps: number) => Promise<void>): Promise<number> {
  const rounds = async (steps: number) => median(await sequence(ROUNDS, () => time(() => workflow(steps))));
  return ((await rounds(STEPS)) - (await rounds(0))) / STEPS;
}

/** The same slope with `CONCURRENT_RUNS` workflows at once, per step of each. */
async function perStepConcurrent(workflow: (steps: number) => Promise<void>): Promise<number> {
  const all = (steps: number) => time(() => Promise.all(Array.from({ length: CONCURRENT_RUNS }, () => workflow(steps))));
  const rounds = async (steps: number) => median(await sequence(ROUNDS, () => all(steps)));
  return ((await rounds(CALLS_PER_RUN)) - (await rounds(0))) / (CONCURRENT_RUNS * CALLS_PER_RUN);
}

/** `n` results of `f`, one after another. */
async function sequence<T>(n: number, f: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

/** Per step (the slope: see `perStep`): one DBOS workflow of STEPS steps vs one Tapedeck script of STEPS calls, each on its own schema of the same database, sequential and 100 at once. */
async function dbosVsTapedeck(rows: Row[], url: string, fresh: () => string): Promise<void> {
  const { DBOS } = await import("@dbos-inc/dbos-sdk");
  const dbosSchema = `dbos_${randomBytes(6).toString("hex")}`;
  DBOS.setConfig({ name: "tapedeck-bench", systemDatabaseUrl: url, systemDatabaseSchemaName: dbosSchema, logLevel: "error" });
  const echo = (i: number): Promise<number> => Promise.resolve(i);
  const workflow = DBOS.registerWorkflow(
    async (steps: number) => {
      let n = 0;
      for (let i = 0; i < steps; i++) n += await DBOS.runStep(() => echo(i), { name: "echo" });
      return n;
    },
    { name: "steps" },
  );
  await DBOS.launch();
  let dbosSequential: number;
  let dbosConcurrent: number;
  try {
    await workflow(10);
    dbosSequential = await perStep((steps) => workflow(steps).then(() => undefined));
    dbosConcurrent = await perStepConcurrent((steps) => workflow(steps).then(() => undefined));
  } finally {
    await DBOS.shutdown();
    await dropSchemas(url, [dbosSchema]);
  }
  const engine = await Engine.open({ store: fresh(), sources: { host: new InProcessHostTools({ t: { echo: (args: unknown) => Promise.resolve(args) } }) } });
  let tapedeckSequential: number;
  let tapedeckConcurrent: number;
  try {
    const { id } = await engine.registerToolset({ hostTools: { t: { echo: { description: "Echo.", inputSchema: { type: "object" } } } } });
    const script = (calls: number) => `import { t } from "tapedeck:tools";
export default async () => { let n = 0; for (let i = 0; i < ${calls}; i++) { await t.echo({ i }); n++; } return n; };`;
    const run = async (calls: number): Promise<void> => {
      const started = await engine.start({ toolset: id, source: script(calls) });
      if (started.kind !== "started") throw new Error("refused");
      const end = await started.end;
      if (end.status !== "completed") throw new Error(`the run ended ${end.status}`);
    };
    await run(10);
    await run(CALLS_PER_RUN);
    tapedeckSequential = await perStep(run);
    tapedeckConcurrent = await perStepConcurrent(run);
  } finally {
    await engine.close();
  }
  rows.push({
    name: `per step (slope, 0 → ${STEPS}), one at a time: a Tapedeck script (PostgreSQL)`,
    value: tapedeckSequential,
    unit: "ms",
    baselineName: `a DBOS workflow, same database`,
    baseline: dbosSequential,
    goal: "≤ 1× DBOS",
  });
  rows.push({
    name: `per step (slope, 0 → ${CALLS_PER_RUN}), 100 at once: Tapedeck scripts (PostgreSQL)`,
    value: tapedeckConcurrent,
    unit: "ms",
    baselineName: `DBOS workflows, same database`,
    baseline: dbosConcurrent,
    goal: "≤ 1× DBOS",
  });
}
