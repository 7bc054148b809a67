import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import type { JournalEntry, JsonValue, RunEnd, UserToolFileSpec } from "@tapedeck/protocol";
import wabtInit from "wabt";
import type { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";

/**
 * WebAssembly user tools (Extism plugins) through the Engine API, built from WAT with wabt: the
 * module's `tapedeck_fetch` host function goes through the same checked path as a TypeScript
 * tool's `fetch` (grant, every redirect hop, sub-call journal), its memory must declare a
 * maximum within the limit, and its deadline ends a call that never returns.
 */

after(() => testSandboxes().close());

let server: LoopbackServer;
before(async () => {
  const json = (body: JsonValue) => (_req: unknown, res: ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  server = await startLoopbackServer({
    "/v1/items": json({ items: [1, 2, 3] }),
    "/admin": json({ admin: true }),
    "/v1/to-admin": (_req, res) => res.writeHead(302, { location: "/admin" }).end(),
  });
});
after(() => server.close());

const base = () => `http://127.0.0.1:${server.port}`;

const KERNEL = `
  (import "extism:host/env" "input_offset" (func $input_offset (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))`;

/** Fetches its input (the fetch's arguments) through tapedeck_fetch, and outputs the answer block. */
const FETCHER = `(module ${KERNEL}
  (import "extism:host/user" "tapedeck_fetch" (func $fetch (param i64) (result i64)))
  (memory (export "memory") 1 4)
  (func (export "run") (result i32)
    (local $r i64)
    (local.set $r (call $fetch (call $input_offset)))
    (call $output_set (local.get $r) (call $length (local.get $r)))
    (i32.const 0)))`;

/** Outputs its input. */
const ECHO = `(module ${KERNEL}
  (memory (export "memory") 1 2)
  (func (export "run") (result i32)
    (call $output_set (call $input_offset) (call $length (call $input_offset)))
    (i32.const 0)))`;

const SPIN = `(module (memory (export "memory") 1 1) (func (export "run") (result i32) (loop $l (br $l)) (i32.const 0)))`;

let wabt: Awaited<ReturnType<typeof wabtInit>>;
before(async () => {
  wabt = await wabtInit();
});

function wasm(wat: string): string {
  const module = wabt.parseWat("tool.wat", wat);
  try {
    return Buffer.from(module.toBinary({}).buffer).toString("base64");
  } finally {
    module.destroy();
  }
}

function tool(wat: string, more: Partial<UserToolFileSpec> = {}): UserToolFileSpec {
  return { description: "A WebAssembly tool.", wasm: wasm(wat), ...more };
}

async function run(engine: Engine, toolset: string, source: string, input?: JsonValue): Promise<{ runId: string; end: RunEnd }> {
  const started = await engine.start({ toolset, source, ...(input === undefined ? {} : { input }) });
  if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
  return { runId: started.runId, end: await started.end };
}

async function refusal(engine: Engine, userTools: Record<string, UserToolFileSpec>): Promise<string> {
  try {
    await engine.registerToolset({ userTools: { w: userTools } });
  } catch (error) {
    assert.ok(error instanceof EngineError && error.code === "invalid_toolset", String(error));
    return error.message;
  }
  assert.fail("registered");
}

describe("WebAssembly user tools", () => {
  it("fetch goes through the grant's checked path as a host function: inside it answers, outside and redirects out are refused and never requested, each a call.sub", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { id } = await t.engine.registerToolset({
        userTools: { w: { fetch: tool(FETCHER, { grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] } }), echo: tool(ECHO) } },
      });
      const before = server.received.length;
      const { runId, end } = await run(
        t.engine,
        id,
        `import { w } from "tapedeck:tools";
         export default async (urls: string[]) => {
           const out: unknown[] = [];
           for (const url of urls) out.push(await w.fetch({ url }));
           return { out, echo: await w.echo({ hello: "wasm" }) };
         };`,
        [`${base()}/v1/items`, `${base()}/admin`, `${base()}/v1/to-admin`],
      );
      assert.equal(end.status, "completed", JSON.stringify(end));
      const { out, echo } = (
        end as unknown as {
          output: { out: { ok: boolean; value?: { status: number; body: string }; error?: { code: string; message: string } }[]; echo: JsonValue };
        }
      ).output;
      assert.deepEqual(echo, { hello: "wasm" });
      assert.deepEqual([out[0]?.ok, out[0]?.value?.status, out[0]?.value?.body], [true, 200, '{"items":[1,2,3]}']);
      assert.equal(out[1]?.error?.code, "refused");
      assert.match(out[1]?.error?.message ?? "", /path \/admin is not under a granted prefix/);
      assert.equal(out[2]?.error?.code, "refused");
      assert.match(out[2]?.error?.message ?? "", /redirected out of the grant/);
      assert.deepEqual(
        server.received.slice(before).map((r) => r.path),
        ["/v1/items", "/v1/to-admin"],
        "/admin was never requested",
      );
      const journal = await t.engine.journal(runId);
      const sub = journal.filter((e): e is Extract<JournalEntry, { kind: "call.sub" }> => e.kind === "call.sub");
      assert.deepEqual(
        sub.map((e) => e.key),
        [`${runId}/1.1`, `${runId}/2.1`, `${runId}/3.1`],
      );
    } finally {
      await t.cleanup();
    }
  });

  it("registration refuses a module without a memory maximum, past the memory limit, importing anything else, or fetching without a grant", async () => {
    const t = await testEngine();
    try {
      assert.match(await refusal(t.engine, { a: tool(ECHO.replace('(memory (export "memory") 1 2)', '(memory (export "memory") 1)')) }), /declares no maximum/);
      assert.match(await refusal(t.engine, { a: tool(ECHO.replace("1 2)", "1 1000)")) }), /may grow to 1000 pages, past limits\.memoryBytes \(256 pages\)/);
      assert.match(
        await refusal(t.engine, { a: tool(`(module (import "env" "open" (func)) (memory 1 1) (func (export "run") (result i32) (i32.const 0)))`) }),
        /imports env open; a tool may import only/,
      );
      assert.match(await refusal(t.engine, { a: tool(FETCHER) }), /imports extism:host\/user tapedeck_fetch, and it has no HTTP grant/);
      assert.match(await refusal(t.engine, { a: tool(ECHO, { entry: "main" }) }), /exports no function main/);
    } finally {
      await t.cleanup();
    }
  });

  it("a call that never returns is stopped at its deadline with a clear error, and the next call runs", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset({ userTools: { w: { spin: tool(SPIN, { limits: { deadlineMs: 300 } }), echo: tool(ECHO) } } });
      const { end } = await run(
        t.engine,
        id,
        `import { w } from "tapedeck:tools";
         export default async () => { let spin = "returned"; try { await w.spin({}); } catch (e) { spin = (e as { code: string }).code + ": " + (e as Error).message; } return { spin, echo: await w.echo({ n: 1 }) }; };`,
      );
      assert.equal(end.status, "completed", JSON.stringify(end));
      const value = (end as unknown as { output: { spin: string; echo: JsonValue } }).output;
      assert.match(value.spin, /^timeout: w\.spin took longer than its deadline \(300 ms\)/);
      assert.deepEqual(value.echo, { n: 1 });
    } finally {
      await t.cleanup();
    }
  });
});
