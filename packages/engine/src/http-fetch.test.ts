import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JournalEntry } from "@tapedeck/protocol";
import { EngineError } from "./errors.js";
import { findSecrets } from "./test-support/leak-scan.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";

/**
 * `fetch` in scripts, through the engine: each request is a journaled `http.fetch` call made by
 * the engine (never by the sandbox), replay answers it from the journal, and a toolset without
 * `http` has no `fetch` at all. The server is on loopback, reached through the engine's
 * test-only allowance.
 */

after(() => testSandboxes().close());

const GITHUB_TOKEN = `ghp_${"a1B2c3D4e5".repeat(4)}`;
const ANTHROPIC_KEY = `sk-ant-api03-${"Zx9Yw8".repeat(10)}`;

let server: LoopbackServer;
before(async () => {
  server = await startLoopbackServer({
    "/items": (req, res) =>
      res.writeHead(200, { "content-type": "application/json", "x-request-method": req.method }).end(JSON.stringify({ items: [1, 2, 3], got: req.body })),
    "/leaky": (_req, res) =>
      res.writeHead(200, { "content-type": "application/json", "x-debug": `Bearer ${ANTHROPIC_KEY}` }).end(JSON.stringify({ token: GITHUB_TOKEN })),
    "/hello": (_req, res) => res.end("hello"),
  });
});
after(() => server.close());

const httpToolset = () => ({ http: { allow: ["127.0.0.1"] } });
const hits = (path: string) => server.received.filter((r) => r.path === path).length;
const base = () => `http://127.0.0.1:${server.port}`;

describe("fetch: a journaled call of http.fetch", () => {
  it("runs end to end: the engine sends the request, the journal records it, replay and verify never send it again", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const before = hits("/items");
      const { runId, end } = await runScript(
        t.engine,
        httpToolset(),
        `export default async () => {
           const response = await fetch("${base()}/items", { method: "post", headers: { "X-Trace": "1" }, body: { q: "all" } });
           const data = (await response.json()) as { items: number[]; got: string };
           return { status: response.status, ok: response.ok, type: response.headers.get("Content-Type"), items: data.items, got: data.got, text: (await response.text()).length };
         };`,
      );
      assert.deepEqual(end, {
        status: "completed",
        output: { status: 200, ok: true, type: "application/json", items: [1, 2, 3], got: '{"q":"all"}', text: 41 },
      });
      assert.equal(hits("/items"), before + 1);
      const received = server.received.at(-1)!;
      assert.equal(received.headers["idempotency-key"], `${runId}/1`);
      assert.equal(received.headers["content-type"], "application/json");
      const journal = await t.engine.journal(runId);
      const scheduled = journal.find((e): e is Extract<JournalEntry, { kind: "call.scheduled" }> => e.kind === "call.scheduled")!;
      assert.equal(scheduled.tool, "http.fetch");
      assert.deepEqual(scheduled.args, {
        url: `${base()}/items`,
        method: "POST",
        headers: { "x-trace": "1", "content-type": "application/json" },
        body: '{"q":"all"}',
      });
      const completed = journal.find((e): e is Extract<JournalEntry, { kind: "call.completed" }> => e.kind === "call.completed")!;
      assert.equal((completed.result as { status: number }).status, 200);
      assert.equal((completed.result as { body: string }).body, '{"items":[1,2,3],"got":"{\\"q\\":\\"all\\"}"}');
      assert.deepEqual(await t.engine.verify(runId), { ok: true, end });
      assert.equal(hits("/items"), before + 1, "verify replayed the journal without fetching");
    } finally {
      await t.cleanup();
    }
  });

  it("wakes a parked run by replay without fetching again", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const before = hits("/hello");
      const { id } = await t.engine.registerToolset(httpToolset());
      const started = await t.engine.start({
        toolset: id,
        source: `export default async () => { const r = await fetch("${base()}/hello"); const s = await signal<number>("go"); return [await r.text(), s]; };`,
      });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      assert.equal((await t.engine.settled(started.runId))?.status, "waiting");
      await t.engine.signal(started.runId, "go", 7);
      assert.deepEqual(await started.end, { status: "completed", output: ["hello", 7] });
      assert.equal(hits("/hello"), before + 1);
    } finally {
      await t.cleanup();
    }
  });

  it("rejects a refused request with a ToolError of code refused the script can catch", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { end } = await runScript(
        t.engine,
        { http: { allow: ["127.0.0.1", "10.0.0.1"] } },
        `import { ToolError } from "tapedeck:tools";
         export default async () => {
           const outcomes = [];
           for (const url of ["http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://evil.example.org/", "http://a@127.0.0.1/"]) {
             try { await fetch(url); outcomes.push("sent"); } catch (e) {
               outcomes.push(e instanceof ToolError ? e.code + " " + e.tool + " " + (e.details as { rule: string }).rule : String(e));
             }
           }
           return outcomes;
         };`,
      );
      assert.deepEqual(end, {
        status: "completed",
        output: ["refused http.fetch address", "refused http.fetch address", "refused http.fetch host-not-allowed", "refused http.fetch credentials"],
      });
    } finally {
      await t.cleanup();
    }
  });

  it("checks fetch's arguments in the sandbox: a TypeError before any call is made", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { runId, end } = await runScript(
        t.engine,
        httpToolset(),
        `export default async () => {
           const errors = [];
           const attempts: (() => Promise<unknown>)[] = [
             () => fetch(42 as never),
             () => fetch("${base()}/hello", { redirect: "manual" } as never),
             () => fetch("${base()}/hello", { body: "x" }),
             () => fetch("${base()}/hello", { method: "CONNECT" }),
             () => fetch("${base()}/hello", { headers: { a: {} as never } }),
           ];
           for (const attempt of attempts) { try { await attempt(); } catch (e) { errors.push((e as Error).name + ": " + (e as Error).message); } }
           return errors;
         };`,
      );
      assert.equal(end.status, "completed");
      const errors = (end as { output: string[] }).output;
      assert.equal(errors.length, 5);
      for (const error of errors) assert.match(error, /^TypeError: fetch: /);
      assert.match(errors[1]!, /"redirect" is not supported/);
      assert.match(errors[2]!, /a GET request cannot have a body/);
      assert.equal((await t.engine.journal(runId)).filter((e) => e.kind === "call.scheduled").length, 0);
    } finally {
      await t.cleanup();
    }
  });

  it("redacts secrets in responses before the journal or the script sees them", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { end } = await runScript(
        t.engine,
        httpToolset(),
        `export default async () => { const r = await fetch("${base()}/leaky"); return { body: await r.text(), debug: r.headers.get("x-debug") }; };`,
      );
      assert.deepEqual(end, { status: "completed", output: { body: '{"token":"[redacted: github token]"}', debug: "Bearer [redacted: bearer token]" } });
      assert.deepEqual(await findSecrets(t.engine, t.dataDir, [GITHUB_TOKEN, ANTHROPIC_KEY]), []);
    } finally {
      await t.cleanup();
    }
  });

  it("redacts secrets in host tool results and failures too (where every result becomes Settled)", async () => {
    const stripe = `sk_live_${"4eC39HqLyjWDarjtT1zdp7dc".repeat(2)}`;
    const tools = new ToolHarness({
      "vault.read": () => ({ key: stripe, [stripe]: "as a key" }),
      "vault.fail": () => {
        throw new Error(`cannot use ${GITHUB_TOKEN}`);
      },
    });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const { end } = await runScript(
        t.engine,
        harnessToolset(["vault.read", "vault.fail"]),
        `import { vault } from "tapedeck:tools";
         export default async () => { const read = await vault.read({}); let failed = ""; try { await vault.fail({}); } catch (e) { failed = (e as Error).message; } return { read, failed }; };`,
      );
      assert.deepEqual(end, {
        status: "completed",
        output: { read: { key: "[redacted: stripe key]", "[redacted: stripe key]": "as a key" }, failed: "cannot use [redacted: github token]" },
      });
      assert.deepEqual(await findSecrets(t.engine, t.dataDir, [stripe, GITHUB_TOKEN]), []);
    } finally {
      await t.cleanup();
    }
  });

  it("is answered by the scenario in test_script, never sent", async () => {
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const before = server.received.length;
      const { id } = await t.engine.registerToolset(httpToolset());
      const mock = {
        status: 418,
        statusText: "I'm a Teapot",
        url: `${base()}/hello`,
        redirected: false,
        headers: { "content-type": "text/plain" },
        body: "mocked",
      };
      const tested = await t.engine.test({
        toolset: id,
        source: `export default async () => { const r = await fetch("${base()}/hello"); return [r.status, r.ok, await r.text()]; };`,
        scenario: { tools: { "http.fetch": { result: mock } } },
      });
      assert.equal(tested.kind, "tested");
      if (tested.kind !== "tested") return;
      assert.deepEqual(tested.output, [418, false, "mocked"]);
      // A mock may give only what the script reads.
      const partial = await t.engine.test({
        toolset: id,
        source: `export default async () => { const r = await fetch("${base()}/hello"); return [r.status, r.ok, r.headers.get("x"), (await r.json()) as unknown]; };`,
        scenario: { tools: { "http.fetch": { result: { status: 200, body: '{"n":1}' } } } },
      });
      assert.deepEqual(partial.kind === "tested" ? partial.output : partial, [200, true, null, { n: 1 }]);
      assert.equal(server.received.length, before);
    } finally {
      await t.cleanup();
    }
  });
});

describe("fetch: only when the toolset enables http", () => {
  it("is a type error without http, and typed with it", async () => {
    const t = await testEngine({ hostTools: new ToolHarness({ "t.a": () => 1 }).module() });
    try {
      const script = `export default async () => (await fetch("http://127.0.0.1/")).status;`;
      const { id: without } = await t.engine.registerToolset(harnessToolset(["t.a"]));
      const refused = await t.engine.check(script, without);
      assert.equal(refused.ok, false);
      assert.match(refused.diagnostics[0]!.message, /Cannot find name 'fetch'/);
      const { id: withHttp } = await t.engine.registerToolset({ ...harnessToolset(["t.a"]), ...httpToolset() });
      assert.equal((await t.engine.check(script, withHttp)).ok, true);
      assert.equal((await t.engine.check(`export default async () => (await fetch("x")).nope;`, withHttp)).ok, false);
    } finally {
      await t.cleanup();
    }
  });

  it("does not exist at run time without http (ReferenceError), and is a function with it", async () => {
    const sandboxes = testSandboxes();
    const run = async (features: readonly "fetch"[]) => {
      const sandbox = await sandboxes.create({
        runId: "run_fetch",
        js: `export default async () => { const kind = typeof fetch; try { await fetch("http://127.0.0.1/"); return [kind, "called"]; } catch (e) { return [kind, e.name + ": " + e.message]; } };`,
        filename: "script.js",
        tools: {},
        features,
        input: null,
        seed: "s",
        startedAt: 0,
        limits: { memoryBytes: 32 << 20, stackBytes: 256 << 10, cpuMsPerStep: 5_000, logLineChars: 1_000 },
      });
      try {
        return await sandbox.start();
      } finally {
        await sandbox.dispose();
      }
    };
    const without = await run([]);
    assert.deepEqual(without.calls, []);
    assert.deepEqual(without.end, { ok: true, output: ["undefined", "ReferenceError: 'fetch' is not defined"] });
    const withFetch = await run(["fetch"]);
    assert.deepEqual(withFetch.calls, [{ seq: 1, tool: "http.fetch", args: { url: "http://127.0.0.1/", method: "GET", headers: {} } }]);
  });
});

describe("fetch: the toolset's http entry", () => {
  it("pins http.fetch with its allow-list: the id covers the hosts, not their order or spelling", async () => {
    const t = await testEngine();
    try {
      const a = await t.engine.registerToolset({ http: { allow: ["api.github.com", "*.Example.com"] } });
      const b = await t.engine.registerToolset({ http: { allow: ["*.example.com", "API.GITHUB.COM."] } });
      const c = await t.engine.registerToolset({ http: { allow: ["api.github.com"] } });
      assert.equal(a.id, b.id);
      assert.notEqual(a.id, c.id);
      const [tool] = a.toolset.tools;
      assert.deepEqual([tool!.group, tool!.name, tool!.source, tool!.http], ["http", "fetch", "builtin", { allow: ["*.example.com", "api.github.com"] }]);
      assert.doesNotMatch(a.declarations.typescript, /export const http/);
      assert.match(a.declarations.prompt, /^fetch\(url, \{ method\?, headers\?, body\?, credential\? \}\) → .*HTTP to \*\.example\.com, api\.github\.com only/);
    } finally {
      await t.cleanup();
    }
  });

  it("takes policies like any tool", async () => {
    const t = await testEngine();
    try {
      const { toolset } = await t.engine.registerToolset({
        http: { allow: ["api.github.com"] },
        policies: { "http.fetch": { approval: true, timeout: "40s" } },
      });
      assert.equal(toolset.tools[0]!.policy.approval, true);
      assert.equal(toolset.tools[0]!.policy.timeoutMs, 40_000);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses invalid entries with a message that says what to write", async () => {
    const t = await testEngine();
    try {
      const cases: [unknown, RegExp][] = [
        [{ allow: [] }, /http\.allow is empty/],
        [{ allow: "api.github.com" }, /http\.allow must be an array/],
        [{ allow: ["https://api.github.com"] }, /http\.allow\[0\]: .*host only, without scheme, port, path or user/],
        [{ allow: ["api.github.com:443"] }, /host only/],
        [{ allow: ["a.com", "*.com"] }, /http\.allow\[1\]: .*every name under a top-level domain/],
        [{ allow: ["*"] }, /"\*" may only be the whole first label/],
        [{ allow: ["a.*.com"] }, /"\*" may only be the whole first label/],
        [{ allow: ["*.10.0.0.1"] }, /not part of an IP address/],
        [{ allow: ["exa mple.com"] }, /not a host|host only|not a valid host/],
        [{ allow: [42] }, /http\.allow\[0\] must be a string/],
        [{ allow: ["a.com"], deny: [] }, /http has an unknown key "deny"/],
      ];
      for (const [http, message] of cases) {
        await assert.rejects(
          t.engine.registerToolset({ http }),
          (error: unknown) => error instanceof EngineError && error.code === "invalid_toolset" && message.test(error.message),
          JSON.stringify(http),
        );
      }
      await assert.rejects(
        t.engine.registerToolset({ http: { allow: ["a.com"] }, hostTools: { http: { get: {} } } }),
        /the group name "http" is taken: it is the group of the built-in http tool/,
      );
    } finally {
      await t.cleanup();
    }
  });
});
