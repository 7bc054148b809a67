import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import type { ToolsetSpec } from "@tapedeck/protocol";
import { within } from "./secrets/derived-credential-use.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

/**
 * A credential set on a toolset reaches the toolsets derived from it only for the uses the
 * base's own tools had (`secrets/derived-credential-use.ts`): a derived toolset that adds
 * `http.fetch` for the credential's host, or a user tool granted it more widely, gets `refused`
 * and nothing reaches the host; the base's own tools, a derived tool granted it within them, and
 * a credential set on the derived toolset itself work. (Through `tapedeck serve`, with
 * `save_tool`: `hostile/hostile-save-tool.test.ts`.)
 */

after(() => testSandboxes().close());

const TOKEN = "derived_cred_value_4c9e1a7b";
let server: LoopbackServer;
before(async () => {
  const ok = (_req: unknown, res: ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end("{}");
  server = await startLoopbackServer({ "/v1/status": ok, "/v1/status/deep": ok, "/admin/rotate": ok });
});
after(() => server.close());

const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
const fetchTool = (path: string, method: string, grants: object) => ({
  description: "Fetches.",
  code: `export default async () => (await fetch("${url(path)}", { method: "${method}", credential: "SVC" })).status;`,
  grants: { secrets: ["SVC"], ...grants },
});

async function engineWithBase(base: ToolsetSpec) {
  const t = await testEngine();
  const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, masterKeyFile: join(t.dataDir, "master.key") });
  const { id } = await engine.registerToolset(base);
  await engine.credentials.set({ name: "SVC", scope: { kind: "toolset", toolsetId: id }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: TOKEN } });
  const reached = () => server.received.filter((r) => r.headers.authorization === `Bearer ${TOKEN}`).map((r) => `${r.method} ${r.path}`);
  const before = reached().length;
  return {
    engine,
    id,
    sent: () => reached().slice(before),
    close: async () => {
      await engine.close();
      await t.cleanup();
    },
  };
}

const status = () => fetchTool("/v1/status", "GET", { http: [{ host: "127.0.0.1", pathPrefix: "/v1/", methods: ["GET"] }] });

describe("a base toolset's credential in derived toolsets", () => {
  it("a derived toolset's http.fetch, absent from the base, does not get the base's credential, named or by host", async () => {
    const t = await engineWithBase({ userTools: { svc: { status: status() } } });
    try {
      for (const options of [`{ method: "POST", credential: "SVC" }`, `{ method: "POST" }`]) {
        const { end } = await runScript(
          t.engine,
          { base: t.id, http: { allow: ["127.0.0.1"] } },
          `export default async () => { try { return (await fetch("${url("/admin/rotate")}", ${options})).status; } catch (e) { return String(e); } };`,
        );
        assert.equal(end.status, "completed");
        const output = end.status === "completed" && typeof end.output === "string" ? end.output : "";
        assert.match(
          output,
          /The credential SVC is set on the toolset ts_\w+, which this toolset derives from, and a script's fetch to 127\.0\.0\.1 is not one/,
        );
        assert.match(output, /its tools send SVC to GET 127\.0\.0\.1\/v1\//);
      }
      assert.deepEqual(t.sent(), [], "nothing reached the host with the credential");
      const { end } = await runScript(
        t.engine,
        { base: t.id, http: { allow: ["127.0.0.1"] } },
        `import { svc } from "tapedeck:tools";\nexport default async () => svc.status({});`,
      );
      assert.deepEqual(end, { status: "completed", output: 200 }, "the base's own tool keeps it on the derived toolset");
      assert.deepEqual(t.sent(), ["GET /v1/status"]);
    } finally {
      await t.close();
    }
  });

  it("a derived user tool gets it within the base's own grants for it, not beyond; set on the derived toolset, it is the owner's choice", async () => {
    const t = await engineWithBase({ userTools: { svc: { status: status() } } });
    try {
      const derived: ToolsetSpec = {
        base: t.id,
        userTools: {
          mine: {
            deep: fetchTool("/v1/status/deep", "GET", { http: [{ host: "127.0.0.1", pathPrefix: "/v1/status/", methods: ["GET"] }] }),
            rotate: fetchTool("/admin/rotate", "POST", { http: [{ host: "127.0.0.1", pathPrefix: "/admin/", methods: ["POST"] }] }),
            post: fetchTool("/v1/status", "POST", { http: [{ host: "127.0.0.1", pathPrefix: "/v1/", methods: ["GET", "POST"] }] }),
          },
        },
      };
      const call = (name: string) => runScript(t.engine, derived, `import { mine } from "tapedeck:tools";\nexport default async () => mine.${name}({});`);
      assert.deepEqual((await call("deep")).end, { status: "completed", output: 200 }, "within GET 127.0.0.1/v1/");
      for (const name of ["rotate", "post"]) {
        const { end } = await call(name);
        assert.equal(end.status, "failed", name);
        assert.match(JSON.stringify(end), new RegExp(`mine\\.${name}, a tool ts_\\w+ does not have`));
      }
      assert.deepEqual(t.sent(), ["GET /v1/status/deep"]);
      const { id } = await t.engine.registerToolset(derived);
      await t.engine.credentials.set({
        name: "SVC",
        scope: { kind: "toolset", toolsetId: id },
        hosts: ["127.0.0.1"],
        secret: { kind: "bearer", token: TOKEN },
      });
      assert.deepEqual((await call("rotate")).end, { status: "completed", output: 200 });
    } finally {
      await t.close();
    }
  });

  it("within: the same host or one under its wildcard, a prefix at or under its prefix, methods among its methods", () => {
    const own = { host: "*.example.com", pathPrefix: "/v1/", methods: ["GET", "POST"] as const };
    assert.equal(within({ host: "api.example.com", pathPrefix: "/v1/x/", methods: ["GET"] }, own), true);
    assert.equal(within({ host: "*.a.example.com", pathPrefix: "/v1/", methods: ["POST"] }, own), true);
    assert.equal(within({ host: "example.org", pathPrefix: "/v1/" }, own), false);
    assert.equal(within({ host: "api.example.com", pathPrefix: "/v10/" }, own), false, "whole segments");
    assert.equal(within({ host: "api.example.com", pathPrefix: "/" }, own), false);
    assert.equal(within({ host: "api.example.com", pathPrefix: "/v1/", methods: ["DELETE"] }, own), false);
    assert.equal(within({ host: "*.example.com", pathPrefix: "/v1/" }, { host: "api.example.com", pathPrefix: "/" }), false);
  });
});
