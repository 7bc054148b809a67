/**
 * `npm run bench`: the engine's speed targets, each measured against a baseline in the same
 * run, so the ratios mean something on a loaded machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import ts from "typescript";
import { Engine, type EngineOptions } from "../engine.js";
import { QuickJsSandboxFactory } from "../sandbox/quickjs-sandbox-factory.js";
import { ScriptChecker } from "../script/checker.js";
import { renderDeclarations } from "../toolset/declarations.js";
import { pinToolset } from "../toolset/pin.js";
import { McpToolSource } from "../sources/mcp/mcp-tool-source.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import { median, percentile, printTable, time, type Row } from "./measure.js";
import { openStore } from "../store/open-store.js";
import { toolLibrary } from "./tool-library.js";
import { multiNode } from "./multi-node.js";
import { userToolsEngine } from "./user-tools-engine.js";
import { scheduleFire } from "./schedule-fire.js";
import { telemetryCost } from "./telemetry.js";
import type { Durability } from "../store/store.js";

const ECHO_TOOLSET = { hostTools: { t: { echo: { description: "Echo.", inputSchema: { type: "object" } } } } };
const echoModule = { t: { echo: (args: unknown) => Promise.resolve(args) } };

function sequentialScript(calls: number): string {
  return `import { t } from "tapedeck:tools";
export default async () => { let n = 0; for (let i = 0; i < ${calls}; i++) { await t.echo({ i }); n++; } return n; };`;
}

async function withEngine<T>(durability: Durability, fn: (engine: Engine) => Promise<T>, options: EngineOptions = {}): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-"));
  const engine = await Engine.open({
    store: await openStore(dir, { durability }),
    sources: { host: new InProcessHostTools(echoModule) },
    limits: { maxJournalEntries: 1_000_000, sandbox: { cpuMsPerStep: 60_000 } },
    ...options,
  });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `source` to its end; `ms` is the run's own time, from the start of execution (after the type check) to its end. */
async function runToEnd(engine: Engine, source: string): Promise<{ runId: string; ms: number }> {
  const { id } = await engine.registerToolset(ECHO_TOOLSET);
  const started = await engine.start({ toolset: id, source });
  if (started.kind !== "started") throw new Error("refused");
  const begin = performance.now();
  const end = await started.end;
  const ms = performance.now() - begin;
  if (end.status !== "completed") throw new Error(end.status === "failed" ? end.error.message : "cancelled");
  return { runId: started.runId, ms };
}

/** One bare single-row commit at synchronous=FULL (or NORMAL: no fsync per commit in WAL mode), the cost group commit must beat. */
function bareCommitMs(count: number, synchronous: "FULL" | "NORMAL" = "FULL"): number {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-"));
  const db = new Database(join(dir, "bare.db"));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.exec("CREATE TABLE j (run TEXT, idx INTEGER, body TEXT, PRIMARY KEY (run, idx)) WITHOUT ROWID");
  const insert = db.prepare("INSERT INTO j VALUES (?, ?, ?)");
  const body = "x".repeat(300);
  const start = performance.now();
  for (let i = 0; i < count; i++) insert.run("r", i, body);
  const ms = (performance.now() - start) / count;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

async function perCallOverhead(rows: Row[]): Promise<void> {
  const calls = 1000;
  // The first run of a fresh process runs code V8 has not optimized yet; a long-lived engine
  // (a server) runs the steady state. Both are shown.
  const [first, steady] = await withEngine("full", async (engine) => {
    await runToEnd(engine, sequentialScript(50));
    const cold = (await runToEnd(engine, sequentialScript(calls))).ms / calls;
    for (let i = 0; i < 3; i++) await runToEnd(engine, sequentialScript(calls));
    return [cold, (await runToEnd(engine, sequentialScript(calls))).ms / calls];
  });
  const perCall = steady;
  const commit = bareCommitMs(1000);
  rows.push({
    name: "per-call overhead, sequential echo, steady state (full)",
    value: steady,
    unit: "ms",
    baselineName: "1 bare SQLite commit (FULL)",
    baseline: commit,
    goal: "≤ 2× one commit",
  });
  rows.push({
    name: "per-call overhead, first run of a process (full)",
    value: first,
    unit: "ms",
    baselineName: "1 bare SQLite commit (FULL)",
    baseline: commit,
    goal: "(context)",
  });
  let sink = 0;
  const loopMs = await time(async () => {
    for (let i = 0; i < calls; i++) sink += ((await echoModule.t.echo({ i })) as { i: number }).i;
  });
  rows.push({
    name: "per-call overhead, steady state (full)",
    value: perCall,
    unit: "ms",
    baselineName: "plain Node loop of awaited echo calls",
    baseline: loopMs / calls,
    goal: "(context)",
  });
  if (sink < 0) console.log(sink);
}

async function sandboxStart(rows: Row[]): Promise<void> {
  const factory = new QuickJsSandboxFactory({ workers: 1 });
  const options = {
    runId: "run_bench",
    js: "export default 1;",
    filename: "script.js",
    tools: {},
    input: null,
    seed: "s",
    startedAt: 0,
    limits: { memoryBytes: 64 << 20, stackBytes: 256 << 10, cpuMsPerStep: 1000, logLineChars: 8192 },
  };
  // What a run waits for before its script runs: create + start. Dispose is off the run's path.
  const samples: number[] = [];
  for (let i = 0; i < 300; i++) {
    let sandbox: Awaited<ReturnType<typeof factory.create>> | undefined;
    samples.push(
      await time(async () => {
        sandbox = await factory.create(options);
        await sandbox.start();
      }),
    );
    await sandbox?.dispose();
  }
  await factory.close();
  const worker = new Worker("const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m));", {
    eval: true,
  });
  const trips: number[] = [];
  for (let i = 0; i < 300; i++) {
    trips.push(
      await time(
        () =>
          new Promise((resolve) => {
            worker.once("message", resolve);
            worker.postMessage(i);
          }),
      ),
    );
  }
  await worker.terminate();
  rows.push({
    name: "sandbox create + start, back to back (p50)",
    value: median(samples.slice(50)),
    unit: "ms",
    baselineName: "worker postMessage round trip",
    baseline: median(trips.slice(50)),
    goal: "≤ 1 ms",
  });
}

const SCRIPT_30 = `import { t } from "tapedeck:tools";

interface Item { id: number; name: string; tags: string[] }

function score(item: Item): number {
  return item.tags.length * 10 + item.name.length;
}

export default async function (input: { ids: number[] }) {
  const items: Item[] = [];
  for (const id of input.ids) {
    const got = (await t.echo({ id })) as { id: number };
    items.push({ id: got.id, name: "item " + got.id, tags: [] });
  }
  const ranked = items
    .map((item) => ({ item, score: score(item) }))
    .sort((a, b) => b.score - a.score);
  const best = ranked[0];
  if (!best) {
    console.log("nothing found");
    return null;
  }
  console.log("best", best.item.id);
  const all = await Promise.all(ranked.map((r) => t.echo({ id: r.item.id })));
  return {
    best: best.item,
    count: all.length,
    names: ranked.map((r) => r.item.name),
  };
}`;

async function warmCheck(rows: Row[]): Promise<void> {
  const { toolset } = await pinToolset({ hostTools: ECHO_TOOLSET.hostTools }, new McpToolSource());
  const declarations = { id: toolset.id, text: renderDeclarations(toolset.tools).typescript };
  const checker = new ScriptChecker();
  for (let i = 0; i < 20; i++) checker.check(SCRIPT_30 + `\n// ${i}`, declarations);
  const samples: number[] = [];
  const transpile: number[] = [];
  for (let i = 0; i < 200; i++) {
    const source = SCRIPT_30 + `\n// variant ${i}`;
    let start = performance.now();
    const result = checker.check(source, declarations);
    samples.push(performance.now() - start);
    if (!result.ok) throw new Error(result.diagnostics[0]?.message);
    start = performance.now();
    ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } });
    transpile.push(performance.now() - start);
  }
  rows.push({
    name: "warm check, 30-line script (p50)",
    value: median(samples),
    unit: "ms",
    baselineName: "ts.transpileModule",
    baseline: median(transpile),
    goal: "≤ 20 ms p50",
  });
  rows.push({
    name: "warm check, 30-line script (p90)",
    value: percentile(samples, 90),
    unit: "ms",
    baselineName: "ts.transpileModule p90",
    baseline: percentile(transpile, 90),
    goal: "(context)",
  });
}

async function replayAndScale(rows: Row[]): Promise<void> {
  await withEngine("normal", async (engine) => {
    const { runId } = await runToEnd(engine, sequentialScript(10_000));
    const read = await time(() => engine.journal(runId, 0, 1_000_000));
    await engine.verify(runId);
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      samples.push(
        await time(async () => {
          const result = await engine.verify(runId);
          if (!result.ok) throw new Error(result.problem);
        }),
      );
    }
    rows.push({
      name: "replay of a 10,000-call journal (verify)",
      value: median(samples),
      unit: "ms",
      baselineName: "reading its 20,002 entries",
      baseline: read,
      goal: "≤ 300 ms",
    });
  });
  await withEngine("normal", async (engine) => {
    const calls = 50_000;
    const live = (await runToEnd(engine, sequentialScript(calls))).ms;
    const [run] = await engine.listRuns({ limit: 1 });
    const replay = await time(async () => {
      const result = await engine.verify(run!.id);
      if (!result.ok) throw new Error(result.problem);
    });
    rows.push({
      name: `run of ${run!.journalLength} entries: replay`,
      value: replay,
      unit: "ms",
      baselineName: "the live run",
      baseline: live,
      goal: "completes and replays",
    });
  });
}

/** One `tools/call` through Tapedeck (a script's sequential calls) vs the SDK client alone. */
async function mcpCalls(rows: Row[]): Promise<void> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { STDIO_MAIN } = await import("../test-support/mcp/fixture-clients.js");
  const { startHttpFixture } = await import("../test-support/mcp/http-fixture.js");
  const calls = 300;
  const fixture = await startHttpFixture();
  try {
    const servers = {
      stdio: {
        spec: { command: process.execPath, args: [STDIO_MAIN] },
        transport: () => new StdioClientTransport({ command: process.execPath, args: [STDIO_MAIN] }),
      },
      "Streamable HTTP": { spec: { url: fixture.url }, transport: () => new StreamableHTTPClientTransport(new URL(fixture.url)) },
    };
    for (const [name, server] of Object.entries(servers)) {
      const client = new Client({ name: "bench", version: "1" });
      await client.connect(server.transport());
      for (let i = 0; i < 50; i++) await client.callTool({ name: "echo", arguments: { text: "x" } });
      const sdk = await time(async () => {
        for (let i = 0; i < calls; i++) await client.callTool({ name: "echo", arguments: { text: `x${i}` } });
      });
      await client.close();
      const perCall = (durability: "full" | "normal") =>
        withEngine(durability, async (engine) => {
          const spec = { mcpServers: { fx: server.spec } };
          const { id } = await engine.registerToolset(spec);
          const script = (n: number) =>
            `import { fx } from "tapedeck:tools";\nexport default async () => { for (let i = 0; i < ${n}; i++) await fx.echo({ text: "x" + i }); return 1; };`;
          const run = async (n: number) => {
            const started = await engine.start({ toolset: id, source: script(n) });
            if (started.kind !== "started") throw new Error("refused");
            const begin = performance.now();
            await started.end;
            return performance.now() - begin;
          };
          await run(50);
          return (await run(calls)) / calls;
        });
      rows.push({
        name: `MCP tools/call over ${name} (full durability)`,
        value: await perCall("full"),
        unit: "ms",
        baselineName: "SDK client alone",
        baseline: sdk / calls,
        goal: "≤ 1.15×",
      });
      // The same without an fsync per commit: what the runtime itself adds to a call.
      rows.push({
        name: `MCP tools/call over ${name} (durability normal: no fsync)`,
        value: await perCall("normal"),
        unit: "ms",
        baselineName: "SDK client alone",
        baseline: sdk / calls,
        goal: "(context)",
      });
      // The same calls 16 at a time: what an agent's script does when calls do not depend on each
      // other. Durability then costs one commit per batch, not per call.
      const batch = 16;
      const batchedClient = new Client({ name: "bench", version: "1" });
      await batchedClient.connect(server.transport());
      const sdkBatched = await time(async () => {
        for (let i = 0; i < calls; i += batch)
          await Promise.all(Array.from({ length: batch }, (_, j) => batchedClient.callTool({ name: "echo", arguments: { text: `x${i + j}` } })));
      });
      await batchedClient.close();
      const perBatchedCall = await withEngine("full", async (engine) => {
        const { id } = await engine.registerToolset({ mcpServers: { fx: server.spec } });
        const script = `import { fx } from "tapedeck:tools";\nexport default async () => { for (let i = 0; i < ${calls}; i += ${batch}) await Promise.all(Array.from({ length: ${batch} }, (_, j) => fx.echo({ text: "x" + (i + j) }))); return 1; };`;
        const run = async () => {
          const started = await engine.start({ toolset: id, source: script });
          if (started.kind !== "started") throw new Error("refused");
          const begin = performance.now();
          await started.end;
          return performance.now() - begin;
        };
        await run();
        return (await run()) / calls;
      });
      rows.push({
        name: `MCP tools/call over ${name}, ${batch} at a time (full durability)`,
        value: perBatchedCall,
        unit: "ms",
        baselineName: "SDK client alone, same batches",
        baseline: sdkBatched / calls,
        goal: "≤ 1.15×",
      });
    }
  } finally {
    await fixture.close();
  }
  const register = await withEngine("off", async (engine) =>
    time(() => engine.registerToolset({ mcpServers: { big: { command: process.execPath, args: [STDIO_MAIN, "--many", "300"] } } })),
  );
  const list = await time(async () => {
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [STDIO_MAIN, "--many", "300"] }));
    await client.listTools();
    await client.close();
  });
  rows.push({
    name: "register a toolset of a 300-tool MCP server",
    value: register,
    unit: "ms",
    baselineName: "SDK connect + tools/list",
    baseline: list,
    goal: "(context)",
  });
}

/**
 * Direct tool mode (seed 002): one model tool call handled through a session (journaled before it
 * is sent, its outcome recorded) against the MCP SDK client alone, over Streamable HTTP, one at a
 * time and 16 at a time (one model turn's calls); and the input tokens of the tools block of a
 * session's first request for the 325-tool corpus, eager against each lazy lowering, counted
 * with OpenAI's o200k_base (js-tiktoken).
 */
async function directCalls(rows: Row[]): Promise<void> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { startHttpFixture } = await import("../test-support/mcp/http-fixture.js");
  const calls = 300;
  const batch = 16;
  const fixture = await startHttpFixture();
  try {
    const sdkTime = async (size: number) => {
      const client = new Client({ name: "bench", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
      for (let i = 0; i < 50; i++) await client.callTool({ name: "echo", arguments: { text: "x" } });
      const ms = await time(async () => {
        for (let i = 0; i < calls; i += size)
          await Promise.all(Array.from({ length: size }, (_, j) => client.callTool({ name: "echo", arguments: { text: `x${i + j}` } })));
      });
      await client.close();
      return ms / calls;
    };
    const directTime = (durability: "full" | "normal", size: number) =>
      withEngine(durability, async (engine) => {
        const { id } = await engine.registerToolset({ mcpServers: { fx: { url: fixture.url } } });
        const ref = { session: `bench-${durability}-${size}` };
        const { binding } = await engine.direct.bind(ref, { toolset: id, tools: ["fx.echo"] });
        let n = 0;
        const turn = (count: number) =>
          Promise.all(
            Array.from({ length: count }, () => {
              const k = n++;
              return engine.direct.call(ref, { binding, api: "anthropic", toolCallId: `toolu_${k}`, name: "fx_echo", input: { text: `x${k}` } });
            }),
          );
        for (let i = 0; i < 50; i++) await turn(1);
        const ms = await time(async () => {
          for (let i = 0; i < calls; i += size) await turn(size);
        });
        return ms / calls;
      });
    // A direct call is two durable writes by design (scheduled before it is sent; its outcome
    // recorded before the model sees it), so it is shown against the SDK plus one bare commit (the
    // issue's goal) and plus two. A turn's concurrent calls share their commits (group commit):
    // 16 at a time, a turn's two commits are shared by its 16 calls.
    for (const durability of ["full", "normal"] as const) {
      const synchronous = durability === "full" ? "FULL" : "NORMAL";
      const bare = bareCommitMs(200, synchronous);
      for (const size of [1, batch]) {
        const sdk = await sdkTime(size);
        const direct = await directTime(durability, size);
        const perCall = size === 1 ? "" : `, per call of a turn of ${size}`;
        const at = size === 1 ? "one at a time" : `${size} per turn`;
        for (const commits of [1, 2]) {
          rows.push({
            name: `direct tool call over Streamable HTTP, ${at} (durability ${durability})`,
            value: direct,
            unit: "ms",
            baselineName: `SDK client alone + ${commits === 1 ? "one bare commit" : "two bare commits"} (${synchronous}${perCall})`,
            baseline: sdk + (commits * bare) / size,
            goal: durability === "full" && size === 1 ? "≤ 1.15×" : "(context)",
          });
        }
      }
    }
  } finally {
    await fixture.close();
  }
  const { getEncoding } = await import("js-tiktoken");
  const { firstRequestTokens } = await import("../direct/first-request-tokens.js");
  const { searchCorpus } = await import("../test-support/tool-search-corpus.js");
  const o200k = getEncoding("o200k_base");
  const tokens = firstRequestTokens(searchCorpus(), (text) => o200k.encode(text).length);
  for (const [api, counts] of [
    ["Anthropic", tokens.anthropic],
    ["OpenAI Responses", tokens.openaiResponses],
  ] as const) {
    for (const lowering of ["menu", "native"] as const) {
      rows.push({
        name: `first request's tools, ${tokens.tools} tools, ${api}, lazy ${lowering === "menu" ? "menu" : api === "Anthropic" ? "anthropic (defer_loading)" : "openai (namespaces, tool_search)"} (o200k_base tokens)`,
        value: counts[lowering],
        unit: "tokens",
        baselineName: "eager (every definition)",
        baseline: counts.eager,
        goal: "≤ 0.15× (85 % fewer)",
      });
    }
  }
}

/**
 * Durable waits: a year of virtual sleep in `test_script`, the memory of many parked runs, and
 * how late a parked run wakes after its timer is due.
 */
async function waits(rows: Row[]): Promise<void> {
  await withEngine("off", async (engine) => {
    const { id } = await engine.registerToolset(ECHO_TOOLSET);
    const test = (source: string) => engine.test({ toolset: id, source });
    await test(`export default async () => { await sleep("1d"); return 1; };`);
    const plainTimes: number[] = [];
    for (let i = 0; i < 5; i++) plainTimes.push(await time(() => test(`export default async () => ${i};`)));
    const plain = median(plainTimes);
    const year = median([
      await time(() => test(`export default async () => { await sleep("1y"); return 1; };`)),
      await time(() => test(`export default async () => { await sleep("1y"); return 2; };`)),
      await time(() => test(`export default async () => { await sleep("1y"); return 3; };`)),
    ]);
    rows.push({
      name: "test_script with a 1-year sleep (virtual time), real ms",
      value: year,
      unit: "ms",
      baselineName: "test_script without a sleep",
      baseline: plain,
      goal: "< 100 ms",
    });
  });

  await withEngine("normal", async (engine) => {
    const { id } = await engine.registerToolset(ECHO_TOOLSET);
    const source = `import { t } from "tapedeck:tools";\nexport default async () => { await t.echo({}); await sleep("30d"); return 1; };`;
    const startOne = async () => {
      const started = await engine.start({ toolset: id, source });
      if (started.kind !== "started") throw new Error("refused");
      const pause = await engine.settled(started.runId);
      if (pause?.status !== "waiting") throw new Error(`expected a parked run, got ${pause?.status}`);
    };
    // Warm up with the same concurrency: sandbox workers' WebAssembly memory grows to the peak of
    // runs executing at once and never shrinks; that peak is not memory held by parked runs.
    for (let i = 0; i < 500; i += 50) await Promise.all(Array.from({ length: 50 }, startOne));
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().rss;
    const heapBefore = process.memoryUsage().heapUsed;
    const count = 10_000;
    const begin = performance.now();
    for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: 50 }, startOne));
    const parkMs = (performance.now() - begin) / count;
    gc?.();
    const grown = (process.memoryUsage().rss - before) / 1024 / 1024;
    const heapGrown = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
    rows.push({
      name: `RSS growth with ${count} parked runs (each slept 30d)`,
      value: grown,
      unit: "MB",
      baselineName: "RSS before",
      baseline: before / 1024 / 1024,
      goal: "< 50 MB",
    });
    rows.push({
      name: `JS heap growth with ${count} parked runs`,
      value: heapGrown,
      unit: "MB",
      baselineName: "heap before",
      baseline: heapBefore / 1024 / 1024,
      goal: "(context)",
    });
    rows.push({ name: "start a run, one call, then park it (each)", value: parkMs, unit: "ms", baselineName: "(none)", baseline: parkMs, goal: "(context)" });
  });

  await withEngine("normal", async (engine) => {
    const { id } = await engine.registerToolset(ECHO_TOOLSET);
    const sleepMs = 2_500;
    const runs = 10;
    const lags = await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const started = await engine.start({
          toolset: id,
          source: `export default async () => { const due = Date.now() + ${sleepMs + i * 10}; await sleep(${sleepMs + i * 10}); return due; };`,
        });
        if (started.kind !== "started") throw new Error("refused");
        const end = await started.end;
        const journal = await engine.journal(started.runId);
        const woke = journal.find((e) => e.kind === "call.completed")!.at;
        return woke - (end.status === "completed" ? (end.output as number) : 0);
      }),
    );
    const timerLag = median(
      await Promise.all(
        Array.from(
          { length: runs },
          () =>
            new Promise<number>((resolve) => {
              const due = Date.now() + sleepMs;
              setTimeout(() => resolve(Date.now() - due), sleepMs);
            }),
        ),
      ),
    );
    rows.push({
      name: `wake-up lag of a parked run (sleep ${sleepMs} ms, p50 of ${runs})`,
      value: Math.max(median(lags), 0.01),
      unit: "ms",
      baselineName: "setTimeout lag",
      baseline: Math.max(timerLag, 0.01),
      goal: "(context; p95 " + percentile(lags, 95).toFixed(0) + " ms)",
    });
  });
}

/**
 * The `http` tool's per-request overhead vs undici alone, on a loopback server reached through
 * the test-only allowance: the URL and address checks, the pinned dispatcher, the bounded read
 * and the leak scan the dispatcher applies to every result. Then the same requests from a script
 * (journaled, full durability), for context.
 */
async function httpTool(rows: Row[]): Promise<void> {
  const { createServer } = await import("node:http");
  const { Agent, request } = await import("undici");
  const { HttpToolSource } = await import("../sources/http/http-tool-source.js");
  const { pinHttpTool } = await import("../toolset/pin-http.js");
  const { SHAPE_SCANNER } = await import("../secrets/leak-scanner.js");
  const body = JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i, title: `item ${i}`, url: `https://example.com/items/${i}` })) });
  const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(body));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/items`;
  const requests = 2000;
  const agent = new Agent();
  const undiciOnce = async () => {
    const response = await request(url, { dispatcher: agent });
    await response.body.text();
  };
  const source = new HttpToolSource({ unsafeAllowLoopbackForTests: true });
  const tool = pinHttpTool(["127.0.0.1"], {});
  let seq = 0;
  const toolOnce = async () => {
    seq++;
    const outcome = await source.call({
      tool,
      args: { url, method: "GET", headers: {} },
      runId: "run_bench",
      seq,
      idempotencyKey: `run_bench/${seq}`,
      attempt: 1,
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      signal: new AbortController().signal,
    });
    if (outcome.kind !== "result") throw new Error(JSON.stringify(outcome));
    SHAPE_SCANNER.scanValue(outcome.value);
  };
  const loop = (once: () => Promise<void>, n: number) =>
    time(async () => {
      for (let i = 0; i < n; i++) await once();
    });
  try {
    await loop(undiciOnce, 300);
    await loop(toolOnce, 300);
    // Interleaved rounds, so a noisy neighbour hurts both sides alike.
    const undiciMs: number[] = [];
    const toolMs: number[] = [];
    for (let round = 0; round < 5; round++) {
      undiciMs.push((await loop(undiciOnce, requests / 5)) / (requests / 5));
      toolMs.push((await loop(toolOnce, requests / 5)) / (requests / 5));
    }
    rows.push({
      name: "http tool, one GET on loopback (source + leak scan)",
      value: median(toolMs),
      unit: "ms",
      baselineName: "undici.request alone (keep-alive)",
      baseline: median(undiciMs),
      goal: "≤ 2× (tens of µs a request)",
    });
    const perFetch = await withEngine(
      "full",
      async (engine) => {
        const { id } = await engine.registerToolset({ http: { allow: ["127.0.0.1"] } });
        const run = async (n: number) => {
          const started = await engine.start({
            toolset: id,
            source: `export default async () => { for (let i = 0; i < ${n}; i++) await (await fetch(${JSON.stringify(url)})).text(); return 1; };`,
          });
          if (started.kind !== "started") throw new Error("refused");
          const begin = performance.now();
          const end = await started.end;
          if (end.status !== "completed") throw new Error(end.status === "failed" ? end.error.message : "cancelled");
          return performance.now() - begin;
        };
        await run(50);
        return (await run(500)) / 500;
      },
      { unsafeHttpAllowLoopbackForTests: true },
    );
    rows.push({
      name: "fetch from a script, journaled (full durability)",
      value: perFetch,
      unit: "ms",
      baselineName: "undici.request alone (keep-alive)",
      baseline: median(undiciMs),
      goal: "(context)",
    });
  } finally {
    await source.close();
    await agent.close();
    server.close();
  }
}

/**
 * The leak scanner on adversarial input (near misses of every key shape, repeated): its time must
 * grow linearly, since a tool chooses what it answers. For each unit, 1 MB against 4 × the time
 * of 256 KB; the row shows the worst unit. A quadratic scan would be about 4× its baseline.
 */
async function leakScan(rows: Row[]): Promise<void> {
  const { LeakScanner } = await import("../secrets/leak-scanner.js");
  const { grow, HANDCRAFTED, KB, NEAR_MISSES } = await import("./leak-scan-corpus.js");
  const scanner = new LeakScanner(["known-secret-value-1"]);
  // The fastest of 5: noise (GC, a busy neighbour) only ever adds time.
  const best = (text: string) =>
    Math.min(
      ...Array.from({ length: 5 }, () => {
        const start = performance.now();
        scanner.scanText(text);
        return performance.now() - start;
      }),
    );
  best(grow(NEAR_MISSES.join(""), 256 * KB)); // warm the JIT
  const units = [...HANDCRAFTED, ...NEAR_MISSES.map((miss) => miss.repeat(3)), NEAR_MISSES.join("")];
  let worst = { unit: "", big: 0, linear: 1, ratio: 0 };
  for (const unit of units) {
    const linear = 4 * best(grow(unit, 256 * KB));
    const big = best(grow(unit, 1024 * KB));
    if (big / linear > worst.ratio) worst = { unit, big, linear, ratio: big / linear };
  }
  rows.push({
    name: `leak scan, 1 MB of adversarial near misses (worst of ${units.length} units)`,
    value: worst.big,
    unit: "ms",
    baselineName: "4 × its 256 KB time (linear)",
    baseline: worst.linear,
    goal: "≈ 1× (quadratic: ≈ 4×); 1 MB < 1 s",
  });
}

/**
 * The known-secret scan on ordinary tool results (`secrets/test-support/ordinary-results.ts`):
 * per MB with one secret known (its every form, `secret-forms.ts`, and the compact pass for
 * split values), against the floor of one `indexOf` of the raw value over the same text; and
 * the false-positive rate on that corpus with 30 secrets known (the goal is 0).
 */
async function leakScanOrdinary(rows: Row[]): Promise<void> {
  const { LeakScanner } = await import("../secrets/leak-scanner.js");
  const { ordinaryResults, randomSecrets } = await import("../secrets/test-support/ordinary-results.js");
  const corpus = ordinaryResults(4 * 1024 * 1024);
  const text = corpus.map((result) => result.text).join("\n");
  const mb = text.length / (1024 * 1024);
  const [secret] = randomSecrets(1, 99);
  const one = new LeakScanner([secret!]);
  const best = (fn: () => unknown) =>
    Math.min(
      ...Array.from({ length: 5 }, () => {
        const start = performance.now();
        fn();
        return performance.now() - start;
      }),
    );
  best(() => one.scanText(text)); // warm the JIT
  const scan = best(() => one.scanText(text)) / mb;
  const floor = best(() => text.indexOf(secret!)) / mb;
  rows.push({
    name: `leak scan, ordinary results, 1 known secret in ${one.formCount} forms + split pass, per MB`,
    value: scan,
    unit: "ms",
    baselineName: "one indexOf of the raw value, per MB",
    baseline: floor,
    goal: "< 50 ms per MB",
  });
  const many = new LeakScanner(randomSecrets(30));
  const changed = corpus.filter((result) => many.scanText(result.text).value !== result.text).length;
  rows.push({
    name: `leak scan false positives, ${corpus.length} ordinary results (${mb.toFixed(1)} MB), 30 secrets known`,
    value: (100 * changed) / corpus.length,
    unit: "%",
    baselineName: "results changed",
    baseline: changed,
    goal: "0",
  });
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const only = process.argv[2];
  if (!only || only === "call") await perCallOverhead(rows);
  if (!only || only === "sandbox") await sandboxStart(rows);
  if (!only || only === "check") await warmCheck(rows);
  if (!only || only === "replay") await replayAndScale(rows);
  if (!only || only === "mcp") await mcpCalls(rows);
  if (!only || only === "direct") await directCalls(rows);
  if (!only || only === "waits") await waits(rows);
  if (!only || only === "http") await httpTool(rows);
  if (!only || only === "leak") await leakScan(rows);
  if (!only || only === "leak") await leakScanOrdinary(rows);
  if (!only || only === "library") await toolLibrary(rows);
  if (!only || only === "nodes") await multiNode(rows);
  if (!only || only === "user-tools") await userToolsEngine(rows);
  if (!only || only === "schedules") await scheduleFire(rows);
  if (!only || only === "telemetry") await telemetryCost(rows);
  printTable(rows);
}

await main();
