import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import type { JournalEntry, JsonValue, RunEnd, UserToolFileSpec } from "@tapedeck/protocol";
import wabtInit from "wabt";
import type { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { findSecrets } from "./test-support/leak-scan.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { tempDir, testEngine, testSandboxes } from "./test-support/engines.js";
import { output, subCalls } from "./test-support/user-tool-runs.js";
import { resumeWithHeldFetch } from "./test-support/held-fetch-resume.js";
import { STDIO_MAIN } from "./test-support/mcp/fixture-clients.js";
import { DEFAULT_USER_TOOL_LIMITS } from "./toolset/user-tool-limits.js";
import { MemorySubCallJournal } from "./user-tools/user-tool-host.js";
import { instrumentedCount } from "./user-tools/wasm-fuel.js";
import { WasmToolRunner } from "./user-tools/wasm-tool-runner.js";

/**
 * WebAssembly user tools (Extism plugins) through the Engine API, built from WAT with wabt: the
 * module's `tapedeck_fetch` host function goes through the same checked path as a TypeScript
 * tool's `fetch` (grant, every redirect hop, sub-call journal), `tapedeck_invoke` and
 * `tapedeck_workspace` carry the tools and workspace grants the same way, its memory must declare
 * a maximum within the limit, fuel stops it at the same point every time, and its deadline ends
 * a call that never returns.
 */

const SECRET = "sk-live-0a1b2c3d4e5f60718293a4b5c6d7e8f9";

after(() => testSandboxes().close());

let server: LoopbackServer;
let holdOpen = true;
before(async () => {
  const json = (body: JsonValue) => (_req: unknown, res: ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  server = await startLoopbackServer({
    "/v1/items": json({ items: [1, 2, 3] }),
    "/admin": json({ admin: true }),
    "/v1/to-admin": (_req, res) => res.writeHead(302, { location: "/admin" }).end(),
    "/v1/echo-auth": (req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`you sent ${req.headers.authorization ?? "nothing"}`),
    "/v1/hold": (_req, res) => {
      // Never answers while held: the engine is stopped while this request is in flight.
      if (!holdOpen) json({ held: false })(undefined, res);
    },
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

/** Increments a global and outputs it (one digit): 1 at every call of a fresh instance. */
const CALLS = `(module ${KERNEL}
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (memory (export "memory") 1 1)
  (global $calls (mut i32) (i32.const 0))
  (func (export "run") (result i32) (local $blk i64)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (local.set $blk (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $blk) (i32.add (i32.const 48) (global.get $calls)))
    (call $output_set (local.get $blk) (i64.const 1))
    (i32.const 0)))`;

type HostFunction = "tapedeck_fetch" | "tapedeck_invoke" | "tapedeck_workspace";

/**
 * A tool that makes `calls` in order, each host function given its JSON request (or the tool's
 * input, without one), and outputs the JSON array of their answers. Requests are data segments.
 */
function sequence(calls: readonly { readonly fn: HostFunction; readonly request?: JsonValue }[]): string {
  let at = 0;
  const data: string[] = [];
  const steps: string[] = [];
  calls.forEach(({ fn, request }, i) => {
    let block = "(call $input_offset)";
    if (request !== undefined) {
      const bytes = Buffer.from(JSON.stringify(request));
      data.push(`(data (i32.const ${at}) "${[...bytes].map((b) => `\\${b.toString(16).padStart(2, "0")}`).join("")}")`);
      block = `(call $block_of (i32.const ${at}) (i32.const ${bytes.length}))`;
      at += bytes.length;
    }
    steps.push(`${i > 0 ? "(call $put (i32.const 44))" : ""} (call $put_block (call $${fn} ${block}))`);
  });
  const out = at + 16;
  const used = [...new Set(calls.map((c) => c.fn))];
  return `(module ${KERNEL}
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  ${used.map((fn) => `(import "extism:host/user" "${fn}" (func $${fn} (param i64) (result i64)))`).join("\n  ")}
  (memory (export "memory") 4 4)
  ${data.join("\n  ")}
  (global $out (mut i32) (i32.const ${out}))
  (func $put (param $b i32) (i32.store8 (global.get $out) (local.get $b)) (global.set $out (i32.add (global.get $out) (i32.const 1))))
  (func $put_block (param $blk i64) (local $i i64) (local $n i64)
    (local.set $n (call $length (local.get $blk)))
    (block $done (loop $l
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $put (call $load_u8 (i64.add (local.get $blk) (local.get $i))))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $l))))
  (func $block_of (param $p i32) (param $n i32) (result i64) (local $blk i64) (local $i i32)
    (local.set $blk (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i))) (i32.load8_u (i32.add (local.get $p) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $blk))
  (func (export "run") (result i32) (local $r i64)
    (call $put (i32.const 91))
    ${steps.join("\n    ")}
    (call $put (i32.const 93))
    (local.set $r (call $block_of (i32.const ${out}) (i32.sub (global.get $out) (i32.const ${out}))))
    (call $output_set (local.get $r) (call $length (local.get $r)))
    (i32.const 0)))`;
}

/** Counts 1, 2, 3, … for ever, logging each number (Extism's log_info): the last line logged is where fuel stopped it. */
const COUNTER = `(module ${KERNEL}
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (memory (export "memory") 1 1)
  (func $log_number (param $n i64) (local $len i32) (local $blk i64) (local $i i32)
    (loop $digits
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (i64.store8 (i32.sub (i32.const 32) (local.get $len)) (i64.add (i64.const 48) (i64.rem_u (local.get $n) (i64.const 10))))
      (local.set $n (i64.div_u (local.get $n) (i64.const 10)))
      (br_if $digits (i64.ne (local.get $n) (i64.const 0))))
    (local.set $blk (call $alloc (i64.extend_i32_u (local.get $len))))
    (loop $copy
      (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i))) (i32.load8_u (i32.add (i32.sub (i32.const 32) (local.get $len)) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $copy (i32.lt_u (local.get $i) (local.get $len))))
    (call $log_info (local.get $blk)))
  (func (export "run") (result i32) (local $n i64)
    (loop $forever
      (local.set $n (i64.add (local.get $n) (i64.const 1)))
      (call $log_number (local.get $n))
      (br $forever))
    (i32.const 0)))`;

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

  it("every call runs a fresh instance of the module: a global it increments is 1 at each call", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset({ userTools: { w: { calls: tool(CALLS) } } });
      const { end } = await run(
        t.engine,
        id,
        `import { w } from "tapedeck:tools";\nexport default async () => { const seen: unknown[] = []; for (let i = 0; i < 5; i++) seen.push(await w.calls({})); return seen; };`,
      );
      assert.equal(end.status, "completed", JSON.stringify(end));
      assert.deepEqual((end as unknown as { output: JsonValue }).output, [1, 1, 1, 1, 1]);
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
      assert.match(value.spin, /^timeout: w\.spin took longer than its deadline \(limits.deadlineMs: 300 ms\)/);
      assert.deepEqual(value.echo, { n: 1 });
    } finally {
      await t.cleanup();
    }
  });
});

type Answer = { readonly ok: boolean; readonly value?: JsonValue; readonly error?: { readonly code: string; readonly message: string } };

describe("WebAssembly user tools' grants, as a TypeScript tool's", () => {
  it("tapedeck_invoke calls a granted tool and tapedeck_workspace reads and writes as granted, each a call.sub {run}/{seq}.{n}; what is not granted is refused", async () => {
    const dir = tempDir();
    const t = await testEngine({ store: SqliteStore.openDataFolder(dir.path, { durability: "normal" }), mcp: new McpToolSource() });
    try {
      const keep = sequence([
        { fn: "tapedeck_invoke", request: { tool: "fx.echo", args: { text: "hello" } } },
        { fn: "tapedeck_workspace", request: { op: "write", args: { path: "notes/last.txt", content: "hello" } } },
        { fn: "tapedeck_invoke", request: { tool: "fx.echo_plain", args: { text: "x" } } },
        { fn: "tapedeck_workspace", request: { op: "read", args: { path: "notes/last.txt" } } },
      ]);
      const read = sequence([
        { fn: "tapedeck_workspace", request: { op: "read", args: { path: "notes/last.txt" } } },
        { fn: "tapedeck_workspace", request: { op: "write", args: { path: "notes/last.txt", content: "overwritten" } } },
        { fn: "tapedeck_workspace", request: { op: "read", args: { path: "../../tapedeck.db" } } },
        { fn: "tapedeck_workspace", request: { op: "delete", args: { path: "notes/last.txt" } } },
      ]);
      const { id } = await t.engine.registerToolset({
        mcpServers: { fx: { command: process.execPath, args: [STDIO_MAIN] } },
        userTools: { w: { keep: tool(keep, { grants: { tools: ["fx.echo"], workspace: "rw" } }), read: tool(read, { grants: { workspace: "ro" } }) } },
      });
      const started = await t.engine.start({
        toolset: id,
        namespace: "acme",
        source: `import { w } from "tapedeck:tools";\nexport default async () => ({ keep: await w.keep({}), read: await w.read({}) });`,
      });
      if (started.kind !== "started") assert.fail(JSON.stringify(started.diagnostics));
      const value = output(await started.end) as { keep: Answer[]; read: Answer[] };
      const [echoed, written, ungranted, readBack] = value.keep;
      assert.deepEqual(echoed, { ok: true, value: { text: "hello" } });
      assert.equal(written?.ok, true, JSON.stringify(written));
      assert.equal(ungranted?.error?.code, "refused");
      assert.match(ungranted?.error?.message ?? "", /is not granted fx\.echo_plain \(granted: fx\.echo, workspace\.list, workspace\.read, workspace\.write\)/);
      assert.equal((readBack?.value as { content: string }).content, "hello");
      const [roRead, roWrite, escaped, unknownOp] = value.read;
      assert.equal((roRead?.value as { content: string }).content, "hello");
      assert.equal(roWrite?.error?.code, "refused", "a read-only workspace refuses a write");
      assert.match(roWrite?.error?.message ?? "", /is not granted workspace\.write \(granted: workspace\.list, workspace\.read\)/);
      assert.equal(escaped?.error?.code, "refused");
      assert.equal(unknownOp?.error?.code, "refused");
      const journal = subCalls(await t.engine.journal(started.runId));
      assert.deepEqual(
        journal.map((e) => `${e.key} ${e.tool} ${e.answer.ok ? "ok" : e.answer.error.code}`),
        [
          `${started.runId}/1.1 fx.echo ok`,
          `${started.runId}/1.2 workspace.write ok`,
          `${started.runId}/1.3 fx.echo_plain refused`,
          `${started.runId}/1.4 workspace.read ok`,
          `${started.runId}/2.1 workspace.read ok`,
          `${started.runId}/2.2 workspace.write refused`,
          `${started.runId}/2.3 workspace.read refused`,
          `${started.runId}/2.4 workspace.delete refused`,
        ],
      );
    } finally {
      await t.cleanup();
      dir.cleanup();
    }
  });

  it("registration refuses a host function whose grant is absent, and a granted tool that is not the toolset's", async () => {
    const t = await testEngine();
    try {
      const invoke = sequence([{ fn: "tapedeck_invoke" }]);
      const workspace = sequence([{ fn: "tapedeck_workspace" }]);
      assert.match(await refusal(t.engine, { a: tool(invoke) }), /imports extism:host\/user tapedeck_invoke, and it has no tool granted \(grants\.tools\)/);
      assert.match(
        await refusal(t.engine, { a: tool(workspace) }),
        /imports extism:host\/user tapedeck_workspace, and it has no workspace grant \(grants\.workspace\)/,
      );
      assert.match(
        await refusal(t.engine, { a: tool(invoke, { grants: { tools: ["fx.nothing"] } }) }),
        /grants\.tools: "fx\.nothing" is not a tool of this toolset/,
      );
      assert.match(
        await refusal(t.engine, { a: tool(ECHO.replace("(memory", '(import "extism:host/user" "tapedeck_fuel_exhausted" (func)) (memory')) }),
        /imports extism:host\/user tapedeck_fuel_exhausted, which is no host function/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it("a granted secret is injected by the host and found nowhere; an ungranted one is refused; past httpRequests a fetch is refused", async () => {
    const t = await testEngine();
    const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, masterKeyFile: join(t.dataDir, "master.key") });
    try {
      const url = `${base()}/v1/echo-auth`;
      const module = sequence([
        { fn: "tapedeck_fetch", request: { url, credential: "API" } },
        { fn: "tapedeck_fetch", request: { url, credential: "OTHER" } },
        { fn: "tapedeck_fetch", request: { url } },
      ]);
      const { id } = await engine.registerToolset({
        userTools: {
          w: { auth: tool(module, { grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }], secrets: ["API"] }, limits: { httpRequests: 2 } }) },
        },
      });
      await engine.credentials.set({ name: "API", scope: { kind: "toolset", toolsetId: id }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: SECRET } });
      const before = server.received.length;
      const { runId, end } = await run(engine, id, `import { w } from "tapedeck:tools";\nexport default async () => w.auth({});`);
      const [granted, other, third] = output(end) as Answer[];
      assert.equal(server.received[before]?.headers.authorization, `Bearer ${SECRET}`, "the server got the credential");
      assert.equal(server.received.length, before + 1, "neither the ungranted credential's request nor the one past the limit was sent");
      assert.equal((granted?.value as { body: string }).body, "you sent Bearer [redacted: secret API]");
      assert.equal(other?.error?.code, "refused");
      assert.match(other?.error?.message ?? "", /The credential "OTHER" is not granted to w\.auth \(granted: API\)/);
      assert.equal(third?.error?.code, "limit_exceeded");
      assert.match(third?.error?.message ?? "", /more than 2 fetch requests in one call/);
      assert.deepEqual(
        subCalls(await engine.journal(runId)).map((e) => e.key),
        [`${runId}/1.1`, `${runId}/1.2`, `${runId}/1.3`],
      );
      assert.deepEqual(await findSecrets(engine, t.dataDir, [SECRET]), []);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("a run stopped mid-call resumes by re-running the module against its recorded sub-calls: what was answered is not sent again, and verify sends nothing", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const module = sequence([
        { fn: "tapedeck_fetch", request: { url: `${base()}/v1/items` } },
        { fn: "tapedeck_fetch", request: { url: `${base()}/v1/hold` } },
      ]);
      const { id } = await t.engine.registerToolset({
        userTools: { w: { two: tool(module, { grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] } }) } },
      });
      const [items, held] = (await resumeWithHeldFetch({
        t,
        server,
        toolset: id,
        source: `import { w } from "tapedeck:tools";\nexport default async () => w.two({});`,
        release: () => (holdOpen = false),
      })) as Answer[];
      assert.equal((items?.value as { body: string }).body, '{"items":[1,2,3]}');
      assert.equal((held?.value as { body: string }).body, '{"held":false}');
    } finally {
      await t.cleanup();
    }
  });
});

/** Asks Extism's kernel for 64 KiB blocks for ever (never freed), touching each: the host's memory, not its own 64 KiB. */
const KERNEL_HOG = `(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store (param i64 i32)))
  (memory (export "memory") 1 1)
  (func (export "run") (result i32)
    (local $block i64)
    (loop $more
      (local.set $block (call $alloc (i64.const 65536)))
      (call $store (i64.add (local.get $block) (i64.const 65535)) (i32.const 1))
      (br $more))
    (i32.const 0)))`;

describe("WebAssembly user tools' kernel memory", () => {
  it("Extism's kernel memory counts against limits.memoryBytes: a module asking for block after block ends with limit_exceeded; the next call runs", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset({ userTools: { w: { hog: tool(KERNEL_HOG, { limits: { fuel: 1 } }), echo: tool(ECHO) } } });
      const { end } = await run(
        t.engine,
        id,
        `import { w } from "tapedeck:tools";
         export default async () => { let error = "no error"; try { await w.hog({}); } catch (e) { error = (e as { code: string }).code + ": " + (e as Error).message; } return { error, echo: await w.echo({ n: 1 }) }; };`,
      );
      const value = output(end) as { error: string; echo: JsonValue };
      assert.match(
        value.error,
        /^limit_exceeded: w\.hog asked Extism's kernel for more than 16711680 bytes of memory blocks in one call: limits\.memoryBytes \(16777216\) less its own memory's declared maximum/,
      );
      assert.deepEqual(value.echo, { n: 1 });
    } finally {
      await t.cleanup();
    }
  });
});

describe("WebAssembly user tools' fuel", () => {
  it("an endless loop ends with limit_exceeded at its fuel, 100 of 100 times, the module instrumented once; the engine keeps serving", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset({ userTools: { w: { spin: tool(SPIN, { limits: { fuel: 3 } }), echo: tool(ECHO) } } });
      const instrumented = instrumentedCount();
      const { end } = await run(
        t.engine,
        id,
        `import { w } from "tapedeck:tools";
         export default async () => {
           const errors: string[] = [];
           for (let i = 0; i < 100; i++) { try { await w.spin({}); errors.push("no error"); } catch (e) { errors.push((e as { code: string }).code + ": " + (e as Error).message); } }
           return { distinct: [...new Set(errors)], count: errors.length, echo: await w.echo({ n: 1 }) };
         };`,
      );
      const value = output(end) as { distinct: string[]; count: number; echo: JsonValue };
      assert.equal(value.count, 100);
      assert.deepEqual(value.distinct, [
        "limit_exceeded: w.spin used all its fuel (3 units: 30000 function entries, loop iterations and returns): it stops at the same point every time. " +
          "Do less work per call (smaller inputs, fewer iterations), or ask for a larger fuel limit (limits.fuel).",
      ]);
      assert.deepEqual(value.echo, { n: 1 }, "the next call runs");
      assert.equal(instrumentedCount(), instrumented, "the modules were instrumented at registration, not per call");
    } finally {
      await t.cleanup();
    }
  });

  it("fuel is deterministic: 100 of 100 calls stop at the same iteration; log lines are kept within logLines and cut at logLineChars", async () => {
    const runner = new WasmToolRunner();
    const module = Buffer.from(wasm(COUNTER), "base64");
    const definition = { name: "w.count", description: "Counts.", inputSchema: { type: "object" }, risk: "low", approval: { kind: "never" } } as const;
    const limits = { ...DEFAULT_USER_TOOL_LIMITS, fuel: 2, logLines: 10, logLineChars: 1 };
    const host = { fetch: () => Promise.reject(new Error("no fetch")), invoke: () => Promise.reject(new Error("no tools")) };
    const stops = new Set<string>();
    after(() => runner.close());
    for (let n = 0; n < 100; n++) {
      const outcome = await runner.call(
        { definition, grants: {}, limits, module, entry: "run" },
        {},
        {
          key: `run_fuel/${n}`,
          signal: new AbortController().signal,
          now: () => 0,
          host,
          journal: new MemorySubCallJournal(),
        },
      );
      assert.equal(outcome.result.kind, "failure");
      if (outcome.result.kind === "failure") assert.equal(outcome.result.failure.code, "limit_exceeded");
      assert.deepEqual(
        outcome.logs.slice(0, 10).map((line) => line.message),
        ["1", "2", "3", "4", "5", "6", "7", "8", "9", "1… [cut: 1 more characters]"],
      );
      stops.add(outcome.logs.at(-1)?.message ?? "none");
    }
    assert.equal(stops.size, 1, `stopped at ${[...stops].join(", ")}`);
    assert.match([...stops][0]!, /^\[\d+ more lines were dropped: a user tool call keeps at most 10\]$/);
  });
});
