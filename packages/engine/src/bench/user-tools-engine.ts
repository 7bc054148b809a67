import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject, ToolsetSpec } from "@tapedeck/protocol";
import { Engine } from "../engine.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";
import { openStore } from "../store/open-store.js";
import { median, time, type Row } from "./measure.js";

/**
 * `npm run bench -- user-tools`: user tools through the engine, in runs of a script (journaled,
 * durability normal): a user tool call (fresh sandbox, `call.scheduled` + `call.completed`)
 * against the same logic as a host tool in the engine's process; and a user tool's journaled
 * `fetch` (grant check, its `call.sub` entry, leak scan) against a script's `fetch` (a journaled
 * `http.fetch` call of its own), each per call over a run of `CALLS` sequential calls.
 */

const CALLS = 100;

/**
 * An Extism plugin that outputs its input, built with wabt from
 * `(module (import "extism:host/env" "input_offset" …) (import … "length" …) (import … "output_set" …)
 *  (memory (export "memory") 1 2) (func (export "run") (result i32) (call $output_set (call $input_offset) (call $length (call $input_offset))) (i32.const 0)))`.
 */
const ECHO_WASM =
  "AGFzbQEAAAABEwRgAAF+YAF+AX5gAn5+AGAAAX8CVgMPZXh0aXNtOmhvc3QvZW52DGlucHV0X29mZnNldAAAD2V4dGlzbTpob3N0L2VudgZsZW5ndGgAAQ9leHRpc206aG9zdC9lbnYKb3V0cHV0X3NldAACAwIBAwUEAQEBAgcQAgZtZW1vcnkCAANydW4AAwoOAQwAEAAQABABEAJBAAs=";
/** Rounds measured, after `WARM_UP_ROUNDS` not counted: the sandbox workers' QuickJS is tiered up by V8 over the first few hundred calls and the process warms over its first seconds (the first rounds are up to 2× slower). */
const ROUNDS = 11;
const WARM_UP_ROUNDS = 8;

export async function userToolsEngine(rows: Row[]): Promise<void> {
  const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"items":[1,2,3]}'));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/items`;
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-bench-user-tools-"));
  const engine = await Engine.open({
    store: await openStore(dir, { durability: "normal" }),
    sources: { host: new InProcessHostTools({ calc: { double: (input: { n: number }) => ({ doubled: input.n * 2 }) } }) },
    unsafeHttpAllowLoopbackForTests: true,
    wake: false,
  });
  const inputSchema: JsonObject = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
  const outputSchema: JsonObject = { type: "object", properties: { doubled: { type: "number" } }, required: ["doubled"] };
  try {
    const spec: ToolsetSpec = {
      http: { allow: ["127.0.0.1"] },
      hostTools: { calc: { double: { description: "Doubles n.", inputSchema, outputSchema } } },
      userTools: {
        u: {
          double: { description: "Doubles n.", code: "export default (input: { n: number }) => ({ doubled: input.n * 2 });", inputSchema, outputSchema },
          echo: { description: "Echoes its input (WebAssembly).", wasm: ECHO_WASM, inputSchema },
          fetched: {
            description: "Fetches once, then doubles n.",
            code: `export default async (input: { n: number }) => { await fetch(${JSON.stringify(url)}); return { doubled: input.n * 2 }; };`,
            inputSchema,
            outputSchema,
            grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] },
          },
        },
      },
    };
    const { id } = await engine.registerToolset(spec);
    const runOnce = async (body: string): Promise<number> => {
      const source = `import { calc, u } from "tapedeck:tools";
        export default async () => { let s = 0; for (let i = 0; i < ${CALLS}; i++) { ${body} } return s; };`;
      const ms = await time(async () => {
        const started = await engine.start({ toolset: id, source });
        if (started.kind !== "started") throw new Error(JSON.stringify(started.diagnostics));
        const end = await started.end;
        if (end.status !== "completed") throw new Error(JSON.stringify(end));
      });
      return ms / CALLS;
    };
    // Bodies compared with each other are measured in the same rounds, interleaved (warm-up
    // rounds first, not counted): on a loaded machine, load drifts over seconds, and a difference
    // of two medians taken minutes apart measures the drift. A marginal cost is the median of
    // the per-round differences.
    const perCall = async (bodies: readonly string[], warmUp = WARM_UP_ROUNDS, rounds = ROUNDS): Promise<number[][]> => {
      const samples = bodies.map((): number[] => []);
      for (let round = 0; round < warmUp + rounds; round++) {
        for (const [i, body] of bodies.entries()) {
          const ms = await runOnce(body);
          if (round >= warmUp) samples[i]!.push(ms);
        }
      }
      return samples;
    };
    const USER = "s += (await u.double({ n: i })).doubled;";
    const [userSamples, hostSamples] = await perCall([USER, "s += (await calc.double({ n: i })).doubled;"]);
    const user = median(userSamples!);
    rows.push({
      name: "user tool call through the engine (per call)",
      value: user,
      unit: "ms",
      baselineName: "same logic as a host tool",
      baseline: median(hostSamples!),
      goal: "",
    });
    // A user tool's fetch: the same tool call with and without one fetch. A script's fetch: a
    // script call of its own (its loop around it costs microseconds), against the same server.
    const [withFetch, withoutFetch, scriptFetch] = await perCall([
      "s += (await u.fetched({ n: i })).doubled;",
      USER,
      "s += (await fetch(" + JSON.stringify(url) + ")).status;",
    ]);
    rows.push({
      name: "user tool's journaled fetch through the engine (its call minus the same call without fetch)",
      value: median(withFetch!.map((ms, i) => ms - withoutFetch![i]!)),
      unit: "ms",
      baselineName: "a script's fetch",
      baseline: median(scriptFetch!),
      goal: "≤ 1.2×",
    });
    // Last, and in fewer rounds: each call starts a worker thread (tens of ms, far above the
    // noise), and their teardown would disturb the rows measured after them.
    const [wasmSamples] = await perCall(["s += ((await u.echo({ n: i })) as { n: number }).n;"], 1, 5);
    rows.push({
      name: "WebAssembly user tool call through the engine (fresh Extism plugin in a worker, per call)",
      value: median(wasmSamples!),
      unit: "ms",
      baselineName: "a TypeScript user tool",
      baseline: user,
      goal: "",
    });
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
