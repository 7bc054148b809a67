import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import type { JsonObject, JsonValue, RunEnd, ToolsetSpec, UserToolFileSpec } from "@tapedeck/protocol";
import type { Engine } from "./engine.js";
import { findSecrets } from "./test-support/leak-scan.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { tempDir, testEngine, testSandboxes } from "./test-support/engines.js";
import { output, registrationError, subCalls } from "./test-support/user-tool-runs.js";
import { resumeWithHeldFetch } from "./test-support/held-fetch-resume.js";
import { STDIO_MAIN } from "./test-support/mcp/fixture-clients.js";
import { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
import { SqliteStore } from "./store/sqlite-store.js";

/**
 * Sandboxed user tools through the Engine API: a toolset file declares them (code, schemas,
 * grants, limits), registration type-checks them, scripts call them like any group's tools,
 * each call is a journaled call whose host calls are `call.sub` entries of the run's journal
 * (`{run}/{seq}.{n}`), and a resumed run re-runs the tool against them. The network is a
 * loopback server reached through the engine's test-only allowance.
 */

after(() => testSandboxes().close());

const SECRET = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0";

let server: LoopbackServer;
let holdOpen = true;
before(async () => {
  const json = (body: JsonValue) => (_req: unknown, res: ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  server = await startLoopbackServer({
    "/v1/items": json({ items: [1, 2, 3] }),
    "/v1/other": json({ other: true }),
    "/v2/items": json({ v2: true }),
    "/admin": json({ admin: true }),
    "/v1/echo-auth": (req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`you sent ${req.headers.authorization ?? "nothing"}`),
    "/v1/to-admin": (_req, res) => res.writeHead(302, { location: "/admin" }).end(),
    "/v1/to-items": (_req, res) => res.writeHead(302, { location: "/v1/items" }).end(),
    "/v1/hold": (_req, res) => {
      // Never answers while held: the engine is stopped while this request is in flight.
      if (!holdOpen) json({ held: false })(undefined, res);
    },
  });
});
after(() => server.close());

const base = () => `http://127.0.0.1:${server.port}`;
const hits = (path: string) => server.received.filter((r) => r.path === path).length;

/** A tool that fetches what it is told and answers the status and body, or the code and message of the ToolError it got. */
const FETCHER = `
import { ToolError } from "tapedeck:tools";
export default async (input: { url: string; method?: string; credential?: string }) => {
  try {
    const init: RequestInit = { method: input.method ?? "GET" };
    if (input.credential !== undefined) init.credential = input.credential;
    const response = await fetch(input.url, init);
    return { status: response.status, body: await response.text() };
  } catch (error) {
    if (error instanceof ToolError) return { code: error.code, message: error.message };
    throw error;
  }
};`;

const FETCHER_SCHEMA: JsonObject = {
  type: "object",
  properties: { url: { type: "string" }, method: { type: "string" }, credential: { type: "string" } },
  required: ["url"],
};

function fetcher(grants: UserToolFileSpec["grants"], more: Partial<UserToolFileSpec> = {}): UserToolFileSpec {
  return { description: "Fetches a URL inside its grant.", code: FETCHER, inputSchema: FETCHER_SCHEMA, grants, ...more };
}

function toolset(tools: Record<string, UserToolFileSpec>, extra: Partial<ToolsetSpec> = {}): ToolsetSpec {
  return { userTools: { net: tools }, ...extra };
}

async function run(engine: Engine, toolsetId: string, source: string, input?: JsonValue): Promise<{ runId: string; end: RunEnd }> {
  const started = await engine.start({ toolset: toolsetId, source, ...(input === undefined ? {} : { input }) });
  if (started.kind === "refused") throw new Error(`refused:\n${started.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n")}`);
  return { runId: started.runId, end: await started.end };
}

describe("user tools offered by a toolset", () => {
  it("scripts call them like group tools; each call is journaled, each fetch a call.sub keyed {run}/{seq}.{n} sent with that key", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { id, declarations } = await t.engine.registerToolset(
        toolset({
          sum: {
            description: "Sums the items of the v1 API.",
            code: `export default async (input: { times: number }) => {
              const [a, b] = await Promise.all([fetch("${base()}/v1/items"), fetch("${base()}/v1/other")]);
              const { items } = (await a.json()) as { items: number[] };
              return { total: items.reduce((x, y) => x + y, 0) * input.times, other: b.status };
            };`,
            inputSchema: { type: "object", properties: { times: { type: "number" } }, required: ["times"] },
            outputSchema: { type: "object", properties: { total: { type: "number" }, other: { type: "number" } }, required: ["total", "other"] },
            grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] },
          },
        }),
      );
      assert.match(declarations.typescript, /sum\(/, "the tool is declared for scripts");
      const before = hits("/v1/items");
      const { runId, end } = await run(
        t.engine,
        id,
        `import { net } from "tapedeck:tools";
         export default async () => { const a = await net.sum({ times: 2 }); const b = await net.sum({ times: 1 }); return a.total + b.total; };`,
      );
      assert.equal(output(end), 18);
      assert.equal(hits("/v1/items"), before + 2);
      const journal = await t.engine.journal(runId);
      const scheduled = journal.filter((e) => e.kind === "call.scheduled").map((e) => (e as { tool: string }).tool);
      assert.deepEqual(scheduled, ["net.sum", "net.sum"]);
      assert.deepEqual(
        subCalls(journal)
          .map((e) => `${e.seq} ${e.key} ${e.tool}`)
          .sort(),
        [`1 ${runId}/1.1 http.fetch`, `1 ${runId}/1.2 http.fetch`, `2 ${runId}/2.1 http.fetch`, `2 ${runId}/2.2 http.fetch`],
      );
      const keys = server.received
        .filter((r) => r.path === "/v1/items")
        .slice(-2)
        .map((r) => r.headers["idempotency-key"]);
      assert.deepEqual(keys, [`${runId}/1.1`, `${runId}/2.1`], "each request carries its sub-call's key");
      const sent = server.received.length;
      assert.deepEqual(await t.engine.verify(runId), { ok: true, end });
      assert.equal(server.received.length, sent, "verify sent nothing");
    } finally {
      await t.cleanup();
    }
  });

  it("registration type-checks each tool against only what it is granted: errors say where, with a code frame, and what is wrong with a grant", async () => {
    const t = await testEngine();
    try {
      const noFetch = await registrationError(
        t.engine,
        toolset({
          f: {
            description: "Fetches without a grant.",
            code: `export default async () => {\n  const r = await fetch("https://example.com/");\n  return r.status;\n};`,
          },
        }),
      );
      assert.match(noFetch, /userTools\.net\["f"\]\.code line 2, column \d+: Cannot find name 'fetch'/);
      assert.match(noFetch, /const r = await fetch/, "with the code frame");
      // The fix where the code lives: its grant in the toolset file, not the toolset's http tool.
      assert.match(
        noFetch,
        /add "grants": \{ "http": \[\{ "host": "<host>", "pathPrefix": "\/<path>\/", "methods": \["GET"\] \}\] \} to the tool's entry under "userTools"/,
      );
      assert.doesNotMatch(noFetch, /registered with "http": \{ "allow"/);
      const base = await t.engine.registerToolset(toolset({ g: { description: "Another tool.", code: `export default () => 1;` } }));
      const saved = await t.engine.saveTool({
        toolset: base.id,
        group: "saved",
        name: "f",
        description: "Fetches without a capability.",
        code: `export default async () => {\n  const r = await fetch("https://example.com/");\n  return r.status;\n};`,
        inputSchema: { type: "object" },
      });
      assert.equal(saved.kind, "refused");
      const advice = saved.kind === "refused" ? saved.diagnostics.map((d) => d.message).join("\n") : "";
      assert.match(advice, /add "capabilities": \{ "http": \[\{ "host": "<host>"/);
      assert.match(advice, /to the save_tool call/);
      // save_tool is held to the server's ceilings as a toolset file is.
      const greedy = await t.engine.saveTool({
        toolset: base.id,
        group: "saved",
        name: "g",
        description: "Asks for an hour.",
        code: `export default () => 1;`,
        inputSchema: { type: "object" },
        limits: { deadlineMs: 3_600_000 },
      });
      assert.deepEqual(greedy.kind === "refused" ? greedy.problems : greedy.kind, [
        "limits.deadlineMs: 3600000 is past this server's ceiling of 120000 (set by its operator: userToolCeilings, tapedeck serve --user-tool-ceilings deadlineMs=…); ask for at most 120000",
      ]);
      const wrongOutput = await registrationError(
        t.engine,
        toolset({
          f: {
            description: "Returns a string for a number.",
            code: `export default (input: { n: number }) => "x" + input.n;`,
            outputSchema: { type: "number" },
          },
        }),
      );
      assert.match(wrongOutput, /userTools\.net\["f"\]\.code line 1/);
      const roWrite = await registrationError(
        t.engine,
        toolset({
          f: {
            description: "Writes in a read-only workspace.",
            code: `import { workspace } from "tapedeck:tools";\nexport default async () => workspace.write({ path: "a.txt", content: "x" });`,
            grants: { workspace: "ro" },
          },
        }),
      );
      assert.match(roWrite, /Property 'write' does not exist/);
      const ungrantedTool = await registrationError(
        t.engine,
        toolset({
          f: { description: "Calls a tool it was not granted.", code: `import { other } from "tapedeck:tools";\nexport default async () => other.g({});` },
          g: { description: "Another tool.", code: `export default () => 1;` },
        }),
      );
      assert.match(ungrantedTool, /has no exported member named 'other'|Module '"tapedeck:tools"' has no exported member/);
      assert.match(
        await registrationError(t.engine, toolset({ f: fetcher({ http: [{ host: "127.0.0.1", pathPrefix: "/v1/%2e%2e/" }] }) })),
        /userTools\.net\["f"\]\.grants\.http\[0\]\.pathPrefix: .* contains "%"/,
      );
      assert.match(await registrationError(t.engine, toolset({ f: fetcher({ secrets: ["API"] }) })), /a secret can only be sent with fetch/);
      assert.match(await registrationError(t.engine, toolset({ f: fetcher({}, { limits: { fuel: -1 } }) })), /limits\.fuel: -1 is not a positive whole number/);
      assert.match(
        await registrationError(t.engine, toolset({ f: fetcher({ tools: ["net.nope"] }) })),
        /grants\.tools: "net\.nope" is not a tool of this toolset/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it("grants and limits are part of the toolset's content address: a changed grant is a new toolset, and a running run keeps its own", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const v1 = toolset({ f: fetcher({ http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] }) });
      const v2 = toolset({ f: fetcher({ http: [{ host: "127.0.0.1", pathPrefix: "/v2/" }] }) });
      const a = await t.engine.registerToolset(v1);
      const again = await t.engine.registerToolset(v1);
      const b = await t.engine.registerToolset(v2);
      const c = await t.engine.registerToolset(toolset({ f: fetcher({ http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] }, { limits: { fuel: 1000 } }) }));
      assert.equal(a.id, again.id);
      assert.equal(new Set([a.id, b.id, c.id]).size, 3);
      const script = `import { net } from "tapedeck:tools";
        export default async () => { await signal("go"); return await net.f({ url: "${base()}/v2/items" }); };`;
      const started = await t.engine.start({ toolset: a.id, source: script });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      await t.engine.settled(started.runId);
      await t.engine.registerToolset(v2);
      await t.engine.signal(started.runId, "go");
      const kept = output(await started.end) as { code: string; message: string };
      assert.equal(kept.code, "refused");
      assert.match(kept.message, /path \/v2\/items is not under a granted prefix/);
      assert.deepEqual(output((await run(t.engine, b.id, script.replace('await signal("go"); ', ""))).end), { status: 200, body: '{"v2":true}' });
    } finally {
      await t.cleanup();
    }
  });
});

describe("user tools' capabilities, through the engine", () => {
  it("each capability absent is refused, and the corpus of violations is refused 100 %: nothing outside the grant reaches the server", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { id } = await t.engine.registerToolset(
        toolset({
          f: fetcher({ http: [{ host: "127.0.0.1", pathPrefix: "/v1/", methods: ["GET"] }], secrets: ["API"] }),
          bare: { description: "Has no grant at all.", code: `export default () => ({ fetch: typeof (globalThis as Record<string, unknown>).fetch });` },
        }),
      );
      const b = base();
      const violations: readonly [string, JsonObject, RegExp][] = [
        ["another host", { url: `http://localhost:${server.port}/v1/items` }, /host localhost is not granted/],
        ["a path outside the prefix", { url: `${b}/admin` }, /path \/admin is not under a granted prefix/],
        ["a prefix that only starts the same", { url: `${b}/v10/items` }, /path \/v10\/items is not under/],
        ["a method not granted", { url: `${b}/v1/items`, method: "DELETE" }, /method DELETE is not granted/],
        ["dot-dot", { url: `${b}/v1/../admin` }, /"\." or "\.\." segment/],
        ["encoded slash", { url: `${b}/v1%2f..%2fadmin` }, /percent-encoded/],
        ["encoded dots", { url: `${b}/v1/%2e%2e/admin` }, /percent-encoded/],
        ["encoded backslash", { url: `${b}/v1/..%5cadmin` }, /percent-encoded/],
        ["double encoding", { url: `${b}/v1/%252e%252e/admin` }, /percent-encoded/],
        ["a backslash", { url: `${b}/v1\\..\\admin` }, /contains "\\"/],
        ["userinfo", { url: `http://user:pw@127.0.0.1:${server.port}/v1/items` }, /user name or password/],
        ["userinfo naming the granted host", { url: `http://127.0.0.1@localhost:${server.port}/v1/items` }, /user name or password/],
        ["a redirect out of the prefix", { url: `${b}/v1/to-admin` }, /redirected out of the grant/],
        ["a secret not granted", { url: `${b}/v1/items`, credential: "OTHER" }, /credential "OTHER" is not granted/],
      ];
      const source = `import { net } from "tapedeck:tools";
        export default async (cases: { url: string; method?: string; credential?: string }[]) => {
          const out: unknown[] = [];
          for (const c of cases) out.push(await net.f(c));
          return { out, bare: await net.bare({}) };
        };`;
      const before = server.received.length;
      const { end } = await run(
        t.engine,
        id,
        source,
        violations.map(([, input]) => input),
      );
      const { out, bare } = output(end) as { out: { code?: string; message?: string }[]; bare: JsonValue };
      assert.deepEqual(bare, { fetch: "undefined" }, "without an http grant there is no fetch");
      const escaped = violations
        .filter(([, , reason], i) => out[i]?.code !== "refused" || !reason.test(out[i]?.message ?? ""))
        .map(([what], i) => `${what}: ${JSON.stringify(out[i])}`);
      assert.deepEqual(escaped, [], `${escaped.length} of ${violations.length} violations were not refused`);
      assert.deepEqual(
        server.received.slice(before).map((r) => r.path),
        ["/v1/to-admin"],
        "only the in-prefix first hop of the redirect was requested; /admin never was",
      );
    } finally {
      await t.cleanup();
    }
  });

  it("a granted secret reaches the server and is found nowhere: database, WAL, journal, sub-calls, output", async () => {
    const t = await testEngine();
    const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, masterKeyFile: join(t.dataDir, "master.key") });
    try {
      const spec = toolset({
        echo: {
          description: "Echoes what the server saw of its credential.",
          code: `export default async () => {
            const body = await (await fetch("${base()}/v1/echo-auth", { credential: "API" })).text();
            console.log("saw", body);
            return { body };
          };`,
          outputSchema: { type: "object", properties: { body: { type: "string" } }, required: ["body"] },
          grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }], secrets: ["API"] },
        },
      });
      const { id } = await engine.registerToolset(spec);
      await engine.credentials.set({ name: "API", scope: { kind: "toolset", toolsetId: id }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: SECRET } });
      const { runId, end } = await run(engine, id, `import { net } from "tapedeck:tools";\nexport default async () => (await net.echo({})).body;`);
      assert.equal(server.received.at(-1)?.headers.authorization, `Bearer ${SECRET}`, "the server got the credential");
      assert.equal(output(end), "you sent Bearer [redacted: secret API]");
      const recorded = subCalls(await engine.journal(runId));
      assert.equal(recorded.length, 1);
      assert.match(JSON.stringify(recorded[0]!.answer), /\[redacted: secret API\]/);
      assert.deepEqual(await findSecrets(engine, t.dataDir, [SECRET]), []);
    } finally {
      await engine.close();
      await t.cleanup();
    }
  });

  it("fuel and memory exhaustion end the call with a clear error, the engine keeps serving; fuel stops at the same point 100 of 100 times", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset(
        toolset({
          spin: {
            description: "Counts until it runs out of fuel.",
            code: `export default () => { let i = 0; for (;;) { i++; (globalThis as Record<string, unknown>).last = i; } };`,
            limits: { fuel: 20 },
          },
          hog: {
            description: "Allocates until it runs out of memory.",
            code: `export default () => { const a: string[] = []; for (;;) a.push("x".repeat(1 << 16) + a.length); };`,
          },
          ok: {
            description: "Answers.",
            code: `export default (input: { n: number }) => input.n + 1;`,
            inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
          },
        }),
      );
      const { end } = await run(
        t.engine,
        id,
        `import { net } from "tapedeck:tools";
         export default async () => {
           const errors: string[] = [];
           for (let i = 0; i < 100; i++) { try { await net.spin({}); errors.push("no error"); } catch (e) { errors.push((e as { code: string }).code + ": " + (e as Error).message); } }
           let hog = "no error";
           try { await net.hog({}); } catch (e) { hog = (e as { code: string }).code + ": " + (e as Error).message; }
           return { distinct: [...new Set(errors)], count: errors.length, hog, after: await net.ok({ n: 41 }) };
         };`,
      );
      const value = output(end) as { distinct: string[]; count: number; hog: string; after: number };
      assert.equal(value.count, 100);
      assert.equal(value.distinct.length, 1, `100 of 100 runs stop at the same point: ${value.distinct.join(" | ")}`);
      assert.match(value.distinct[0]!, /^limit_exceeded: .*fuel/i);
      assert.match(value.hog, /^limit_exceeded: .*memory/i);
      assert.equal(value.after, 42, "the next call runs");
      assert.equal(
        output((await run(t.engine, id, `import { net } from "tapedeck:tools";\nexport default async () => net.ok({ n: 1 });`)).end),
        2,
        "and the engine serves the next run",
      );
    } finally {
      await t.cleanup();
    }
  });

  it("a run stopped mid-call resumes by re-running the tool against its recorded sub-calls: what was answered is not sent again, and verify sends nothing", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { id } = await t.engine.registerToolset(
        toolset({
          two: {
            description: "Fetches items, then waits on a slow endpoint.",
            code: `export default async () => {
              const items = await (await fetch("${base()}/v1/items")).json();
              const held = await (await fetch("${base()}/v1/hold")).json();
              return { items, held, at: Date.now() };
            };`,
            grants: { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] },
          },
        }),
      );
      const value = (await resumeWithHeldFetch({
        t,
        server,
        toolset: id,
        source: `import { net } from "tapedeck:tools";\nexport default async () => net.two({});`,
        release: () => (holdOpen = false),
      })) as { items: JsonValue; held: JsonValue };
      assert.deepEqual([value.items, value.held], [{ items: [1, 2, 3] }, { held: false }]);
    } finally {
      await t.cleanup();
    }
  });
});

describe("user tools' invocations and workspace, through the engine", () => {
  it("invokes the tools it is granted (journaled sub-calls), never one that needs approval; reads and writes the namespace's workspace as granted", async () => {
    const dir = tempDir();
    const t = await testEngine({ store: SqliteStore.openDataFolder(dir.path, { durability: "normal" }), mcp: new McpToolSource() });
    try {
      const { id } = await t.engine.registerToolset({
        mcpServers: { fx: { command: process.execPath, args: [STDIO_MAIN] } },
        policies: { "fx.echo_plain": { approval: true } },
        userTools: {
          notes: {
            keep: {
              description: "Echoes a note through fx.echo and keeps it in the workspace.",
              code: `import { fx, workspace } from "tapedeck:tools";
                export default async (input: { note: string }) => {
                  const echoed = await fx.echo({ text: input.note });
                  await workspace.write({ path: "notes/last.txt", content: echoed.text });
                  let asked = "sent";
                  try { await fx.echo_plain({ text: "x" }); } catch (e) { asked = (e as { code: string }).code + ": " + (e as Error).message; }
                  return { echoed: echoed.text, asked };
                };`,
              inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
              outputSchema: { type: "object", properties: { echoed: { type: "string" }, asked: { type: "string" } }, required: ["echoed", "asked"] },
              grants: { tools: ["fx.echo", "fx.echo_plain"], workspace: "rw" },
            },
            read: {
              description: "Reads the last note, read-only.",
              code: `import { workspace } from "tapedeck:tools";
                export default async () => {
                  const file = await workspace.read({ path: "notes/last.txt" });
                  let escaped = "read";
                  try { await workspace.read({ path: "../../tapedeck.db" }); } catch (e) { escaped = (e as { code: string }).code; }
                  return { content: file.content, escaped };
                };`,
              outputSchema: { type: "object", properties: { content: { type: "string" }, escaped: { type: "string" } }, required: ["content", "escaped"] },
              grants: { workspace: "ro" },
            },
          },
        },
      });
      const started = await t.engine.start({
        toolset: id,
        namespace: "acme",
        source: `import { notes } from "tapedeck:tools";
export default async () => ({ kept: await notes.keep({ note: "hello" }), read: await notes.read({}) });`,
      });
      if (started.kind !== "started") assert.fail(JSON.stringify(started.diagnostics));
      const value = output(await started.end) as { kept: { echoed: string; asked: string }; read: { content: string; escaped: string } };
      assert.equal(value.kept.echoed, "hello");
      assert.match(value.kept.asked, /^refused: fx\.echo_plain needs approval before each call/);
      assert.deepEqual(value.read, { content: "hello", escaped: "refused" });
      const journal = subCalls(await t.engine.journal(started.runId));
      assert.deepEqual(
        journal.map((e) => `${e.key} ${e.tool} ${e.answer.ok ? "ok" : e.answer.error.code}`),
        [
          `${started.runId}/1.1 fx.echo ok`,
          `${started.runId}/1.2 workspace.write ok`,
          `${started.runId}/1.3 fx.echo_plain refused`,
          `${started.runId}/2.1 workspace.read ok`,
          `${started.runId}/2.2 workspace.read refused`,
        ],
      );
    } finally {
      await t.cleanup();
      dir.cleanup();
    }
  });
});

describe("a user tool's calls of other tools meet their policies", () => {
  it("approval rules deny or refuse what would be asked, and the rate limit counts the tool's calls with the script's", async () => {
    const dir = tempDir();
    const t = await testEngine({ store: SqliteStore.openDataFolder(dir.path, { durability: "normal" }), mcp: new McpToolSource() });
    try {
      const { id } = await t.engine.registerToolset({
        mcpServers: { fx: { command: process.execPath, args: [STDIO_MAIN] } },
        policies: {
          "fx.echo": {
            approval: {
              kind: "rules",
              rules: [
                { action: "deny", when: [{ pointer: "/text", matches: "^rm " }], reason: "Deletes are not echoed" },
                { action: "ask", when: [{ pointer: "/text", matches: "^deploy" }], reason: "Deploys need a person" },
              ],
              otherwise: { kind: "never" },
            },
          },
          "fx.echo_plain": { rateLimit: { perMinute: 2 } },
        },
        userTools: {
          relay: {
            say: {
              description: "Echoes each text through fx.echo, then fx.echo_plain; answers each outcome.",
              code: `import { fx } from "tapedeck:tools";
                export default async (input: { texts: string[] }) => {
                  const outcomes: string[] = [];
                  for (const text of input.texts) {
                    for (const call of [() => fx.echo({ text }), () => fx.echo_plain({ text })]) {
                      try { await call(); outcomes.push("sent"); } catch (e) { outcomes.push((e as { code: string }).code + ": " + (e as Error).message); }
                    }
                  }
                  return { outcomes };
                };`,
              inputSchema: { type: "object", properties: { texts: { type: "array", items: { type: "string" } } }, required: ["texts"] },
              outputSchema: { type: "object", properties: { outcomes: { type: "array", items: { type: "string" } } }, required: ["outcomes"] },
              grants: { tools: ["fx.echo", "fx.echo_plain"] },
            },
          },
        },
      });
      const started = await t.engine.start({
        toolset: id,
        namespace: "acme",
        source: `import { fx, relay } from "tapedeck:tools";
export default async () => { await fx.echo_plain({ text: "from the script" }); return relay.say({ texts: ["hello", "rm -rf /", "deploy prod"] }); };`,
      });
      if (started.kind !== "started") assert.fail(JSON.stringify(started.diagnostics));
      const { outcomes } = output(await started.end) as { outcomes: string[] };
      assert.equal(outcomes[0], "sent");
      assert.equal(outcomes[1], "sent");
      assert.match(outcomes[2]!, /^refused: fx\.echo is refused by its approval rules: Deletes are not echoed/);
      // The script's call and the tool's first took the window's two places.
      assert.match(outcomes[3]!, /^rate_limited: /);
      assert.match(outcomes[4]!, /^refused: fx\.echo asks for approval of this call \(Deploys need a person\), and a user tool cannot wait for one/);
      assert.match(outcomes[5]!, /^rate_limited: /);
      const answered = subCalls(await t.engine.journal(started.runId)).map((e) => `${e.tool} ${e.answer.ok ? "ok" : e.answer.error.code}`);
      assert.deepEqual(answered, [
        "fx.echo ok",
        "fx.echo_plain ok",
        "fx.echo refused",
        "fx.echo_plain rate_limited",
        "fx.echo refused",
        "fx.echo_plain rate_limited",
      ]);
    } finally {
      await t.cleanup();
      dir.cleanup();
    }
  });
});

describe("user tools in direct tool sessions", () => {
  it("a direct session offers a user tool as a model tool; its call is journaled with its sub-calls keyed by the session's call", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { id } = await t.engine.registerToolset(toolset({ f: fetcher({ http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] }) }));
      const ref = { session: "user-tools", namespace: "dora" };
      const bound = await t.engine.direct.bind(ref, { toolset: id, approval: { allow: ["*"] } });
      const answer = await t.engine.direct.call(ref, {
        binding: bound.binding,
        api: "generic",
        toolCallId: "toolu_1",
        name: "net_f",
        input: { url: `${base()}/v1/items` },
      });
      assert.equal(answer.status, "done", JSON.stringify(answer));
      const result = (answer.status === "done" ? answer.result : undefined) as { text: string; isError: boolean };
      assert.equal(result.isError, false);
      assert.deepEqual(JSON.parse(result.text), { status: 200, body: '{"items":[1,2,3]}' });
      const journal = await t.engine.journal(bound.id);
      assert.deepEqual(
        subCalls(journal).map((e) => [e.key, e.tool]),
        [[`${bound.id}/1.1`, "http.fetch"]],
      );
    } finally {
      await t.cleanup();
    }
  });
});
