import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import createPlugin from "@extism/extism";
import type { PinnedTool } from "@tapedeck/protocol";
import Database from "better-sqlite3";
import { checkRateLimit } from "../library/rate-limit/rate-limiter.js";
import { SqliteRateLimitStore } from "../store/sqlite-rate-limit-store.js";
import { QuickJsSandboxFactory } from "../sandbox/quickjs-sandbox-factory.js";
import { ScriptChecker } from "../script/checker.js";
import { compileScript } from "../script/compile.js";
import { HttpToolSource } from "../sources/http/http-tool-source.js";
import { pinHttpTool } from "../toolset/pin-http.js";
import type { ToolCallRequest, ToolSource } from "../sources/tool-source.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import { pinUserTools } from "../toolset/pin-user-tools.js";
import { systemClock } from "../clock.js";
import { SchemaValidator } from "../util/schema-validator.js";
import { UserToolSource } from "../user-tools/user-tool-source.js";
import { MemorySubCallJournal, registerUserTool, UserToolRunner, type UserTool, type UserToolHost } from "../user-tools/index.js";
import { WasmToolRunner } from "../user-tools/wasm-tool-runner.js";
import { withDefaultLimits } from "../toolset/user-tool-limits.js";
import { median, percentile, time, type Row } from "./measure.js";

/**
 * `npm run bench -- library`: a user tool call (a fresh context per call) through the user tool
 * source, as the engine makes it, against the same logic as a host tool through its source (p50 and p95); a user tool's `fetch` (grant check, sub-call
 * record, leak scan) against the same request sent by the `http` tool source alone; rate-limit
 * checks per second on SQLite; a WebAssembly tool's call (back to back, and spaced so that its
 * spare plugin is ready) against a fresh Extism plugin per call. Issue 15's goals: a fresh-context call p50 ≤ 1 ms; a user tool's
 * journaled fetch ≤ 1.2× a script's (measured here against the source alone, which is stricter).
 */

const SIGNAL = new AbortController().signal;
const INPUT_SCHEMA = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

function register(code: string, grants = {}): UserTool {
  const registration = registerUserTool(
    {
      definition: {
        name: "double",
        description: "Doubles n.",
        inputSchema: INPUT_SCHEMA,
        risk: "low",
        approval: { kind: "never" },
      },
      code,
      grants,
    },
    [],
    new ScriptChecker(),
  );
  if (!registration.ok) throw new Error(registration.problems.join("; "));
  return registration.tool;
}

export async function toolLibrary(rows: Row[]): Promise<void> {
  const sandboxes = new QuickJsSandboxFactory({ workers: 1 });
  const runner = new UserToolRunner(sandboxes);
  const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"items":[1,2,3]}'));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/items`;
  const source = new HttpToolSource({ unsafeAllowLoopbackForTests: true });
  const pinned = pinHttpTool(["127.0.0.1"], {});
  let seq = 0;
  const request = (key: string): ToolCallRequest => ({
    tool: pinned,
    args: { url, method: "GET", headers: {} },
    runId: "run_bench",
    seq: ++seq,
    idempotencyKey: key,
    attempt: 1,
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    signal: SIGNAL,
  });
  const host: UserToolHost = {
    fetch: (args, key, signal, within) => source.call({ ...request(key), args, signal, targetCheck: within }),
    invoke: () => Promise.reject(new Error("no tools in the bench")),
  };
  try {
    const doubleCode = "export default (input: { n: number }) => ({ doubled: input.n * 2 });";
    const double = register(doubleCode);
    const userCall = async (tool: UserTool, i: number) => {
      const outcome = await runner.call(tool, { n: i }, { key: `run_bench/${i}`, signal: SIGNAL, now: () => 0, host, journal: new MemorySubCallJournal() });
      if (outcome.result.kind !== "result") throw new Error(JSON.stringify(outcome.result));
    };
    // The call as the engine makes it: a `ToolCallRequest` to the user tool source (compiled once
    // per pinned tool, a host for its grants, a fresh sandbox, the leak scan, the output schema),
    // against the same logic as a host tool served in the engine's process (the same request shape).
    const userSource = new UserToolSource({
      sandboxes,
      clock: systemClock,
      compile: (code) => Promise.resolve(compileScript(code)),
      context: () => Promise.resolve({ tools: new Map(), validator: new SchemaValidator() }),
      send: () => Promise.reject(new Error("no tools in the bench")),
    });
    const hostSource = new InProcessHostTools({ calc: { double: (input: { n: number }) => ({ doubled: input.n * 2 }) } });
    const outputSchema = { type: "object", properties: { doubled: { type: "number" } }, required: ["doubled"] };
    const [pinnedUser] = pinUserTools({ u: { double: { description: "Doubles n.", code: doubleCode, inputSchema: INPUT_SCHEMA, outputSchema } } }, {});
    const pinnedHost: PinnedTool = { ...pinnedUser!, group: "calc", source: "host", user: undefined };
    const sourceCall = async (source: ToolSource, tool: PinnedTool, i: number) => {
      const outcome = await source.call({ ...request(`run_bench/${i}`), tool, args: { n: i } });
      if (outcome.kind !== "result") throw new Error(JSON.stringify(outcome));
    };
    const calls: number[] = [];
    const natives: number[] = [];
    for (let i = 0; i < 1_200; i++) {
      calls.push(await time(() => sourceCall(userSource, pinnedUser!, i)));
      natives.push(await time(() => sourceCall(hostSource, pinnedHost, i)));
    }
    for (const p of [50, 95]) {
      rows.push({
        name: `user tool call, fresh context, through its tool source (p${p})`,
        value: percentile(calls.slice(200), p),
        unit: "ms",
        baselineName: "same logic as a host tool (its source)",
        baseline: percentile(natives.slice(200), p),
        goal: p === 50 ? "≤ 1 ms" : "",
      });
    }
    await userSource.close();

    const fetcher = register(`export default async (input: { n: number }) => (await fetch(${JSON.stringify(url)})).status + input.n;`, {
      http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }],
    });
    const bare = async () => {
      const outcome = await source.call(request(`run_bench/x${seq}`));
      if (outcome.kind !== "result") throw new Error(JSON.stringify(outcome));
    };
    const fetches: number[] = [];
    const bares: number[] = [];
    const sandboxOnly: number[] = [];
    for (let i = 0; i < 300; i++) {
      fetches.push(await time(() => userCall(fetcher, i)));
      bares.push(await time(bare));
      sandboxOnly.push(await time(() => userCall(double, i)));
    }
    // The fetch's own cost in a user tool: the call with a fetch minus the same call without one,
    // against the request alone (no sandbox round trip, no journal). The goal against a script's
    // fetch is measured through the engine, where both have them (`npm run bench -- user-tools`).
    rows.push({
      name: "user tool fetch, on top of its call (p50)",
      value: median(fetches.slice(50)) - median(sandboxOnly.slice(50)),
      unit: "ms",
      baselineName: "http tool source alone",
      baseline: median(bares.slice(50)),
      goal: "",
    });

    await wasmCalls(rows, host);

    const store = new SqliteRateLimitStore(new Database(":memory:"));
    const checks = 20_000;
    const ms = await time(async () => {
      for (let i = 0; i < checks; i++)
        await checkRateLimit(store, { namespace: `user-${i % 100}`, tool: "web.fetch" }, { perMinute: 1_000, perHour: 10_000 }, i);
    });
    // IronClaw's limiter: fixed windows counted in a map in memory (lost on restart, not shared).
    const counts = new Map<string, number>();
    const memoryMs = await time(() => {
      for (let i = 0; i < checks; i++) {
        const key = `user-${i % 100}/web.fetch/${Math.floor(i / 60_000)}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    });
    rows.push({
      name: "rate-limit checks (SQLite, sliding, 2 windows)",
      value: Math.round((checks / ms) * 1000),
      unit: "/s",
      baselineName: "fixed windows in memory",
      baseline: Math.round((checks / memoryMs) * 1000),
      goal: "",
    });
  } finally {
    await sandboxes.close();
    await source.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * An Extism plugin that outputs its input (see `user-tools-engine.ts`), called by the runner back
 * to back and 50 ms apart (time for its spare plugin to start), against a fresh plugin compiled
 * from the bytes per call: what the runner did before it kept a compiled module and a spare.
 */
const ECHO_WASM =
  "AGFzbQEAAAABEwRgAAF+YAF+AX5gAn5+AGAAAX8CVgMPZXh0aXNtOmhvc3QvZW52DGlucHV0X29mZnNldAAAD2V4dGlzbTpob3N0L2VudgZsZW5ndGgAAQ9leHRpc206aG9zdC9lbnYKb3V0cHV0X3NldAACAwIBAwUEAQEBAgcQAgZtZW1vcnkCAANydW4AAwoOAQwAEAAQABABEAJBAAs=";

async function wasmCalls(rows: Row[], host: UserToolHost): Promise<void> {
  const runner = new WasmToolRunner();
  const bytes = Buffer.from(ECHO_WASM, "base64");
  const tool = {
    definition: { name: "w.echo", description: "Echoes.", inputSchema: { type: "object" }, risk: "low", approval: { kind: "never" } } as const,
    grants: {},
    limits: withDefaultLimits("wasm"),
    module: bytes,
    entry: "run",
  };
  const call = async (i: number) => {
    const outcome = await runner.call(tool, { n: i }, { key: `run_bench/w${i}`, signal: SIGNAL, now: () => 0, host, journal: new MemorySubCallJournal() });
    if (outcome.result.kind !== "result") throw new Error(JSON.stringify(outcome.result));
  };
  const fresh = async (i: number) => {
    const plugin = await createPlugin({ wasm: [{ data: bytes }] }, { useWasi: false, runInWorker: true, allowedHosts: [], functions: {} });
    await plugin.call("run", JSON.stringify({ n: i }));
    await plugin.close();
  };
  try {
    const backToBack: number[] = [];
    const spaced: number[] = [];
    const freshes: number[] = [];
    for (let i = 0; i < 40; i++) backToBack.push(await time(() => call(i)));
    for (let i = 0; i < 40; i++) freshes.push(await time(() => fresh(i)));
    for (let i = 0; i < 40; i++) {
      await sleep(50);
      spaced.push(await time(() => call(i)));
    }
    // The first calls instrument and compile the module and start the first plugins.
    const baseline = median(freshes.slice(5));
    rows.push({
      name: "WebAssembly tool call, calls back to back (p50)",
      value: median(backToBack.slice(5)),
      unit: "ms",
      baselineName: "a fresh Extism plugin per call",
      baseline,
      goal: "",
    });
    rows.push({
      name: "WebAssembly tool call, 50 ms after the last (spare plugin ready, p50)",
      value: median(spaced.slice(5)),
      unit: "ms",
      baselineName: "a fresh Extism plugin per call",
      baseline,
      goal: "",
    });
  } finally {
    await runner.close();
  }
}
