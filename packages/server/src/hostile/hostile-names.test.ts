import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SqliteStore } from "@tapedeck/engine";
import type { WorkerHandle } from "@tapedeck/sdk";
import { cli } from "../cli/cli.js";
import { capture } from "../cli/test-support/in-process.js";
import { createKey } from "../http/test-support/serve-child.js";
import { failure } from "../http/test-support/failure.js";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Hostile names and secret-bearing toolsets against a real `tapedeck serve`, sent with a key
 * limited to the namespace `mallory`: names that would shadow the engine's primitives or the
 * sandbox's globals, names that are `Object.prototype` members, toolset bodies holding secrets,
 * data-keyed results that would leak into everyone's declarations, malleable tokens, a key
 * limited to labels acting as an end user, a forged row in the database. Each gets a 4xx with a
 * clear message (or works as a name like any other), nothing is stored, and after each the
 * server is up and the victim's run completes.
 */
let hostile: HostileServer;

before(async () => {
  hostile = await startHostileServer();
});

after(async () => {
  await hostile.close();
});

/** Whether any file of the server's data folder (the database, its WAL) holds `text`. */
function dataFolderHolds(text: string): boolean {
  const dir = hostile.server.dataDir;
  return readdirSync(dir, { withFileTypes: true }).some((entry) => entry.isFile() && readFileSync(join(dir, entry.name)).includes(text));
}

let markers = 0;
/** A word found nowhere else: put in a refused toolset, it must not reach the data folder. */
function marker(): string {
  return `hostile-marker-${process.pid}-${++markers}`;
}

describe("hostile names and secret-bearing toolsets (a real server, a limited key)", () => {
  it("groups named like the engine's primitives or the sandbox's globals are refused, naming the clash, and nothing is stored", async () => {
    for (const group of [
      "tapedeck",
      "workflows",
      "http",
      "webhook",
      "sleep",
      "signal",
      "fetch",
      "console",
      "setTimeout",
      "ToolError",
      "JSON",
      "Promise",
      "globalThis",
      "__tapedeck_tools__",
    ]) {
      const word = marker();
      const error = await failure(hostile.attacker.toolsets.create({ hostTools: { [group]: { run: { description: word } } } }));
      assert.deepEqual([error.status, error.code], [422, "invalid_toolset"], `${group}: ${error.message}`);
      assert.match(error.message, new RegExp(`^hostTools: the group name "${group}" is taken: it is .+\\. Give the group another name\\.$`));
      assert.equal(dataFolderHolds(word), false, `the refused toolset with group ${group} was stored`);
    }
    // The check can fail: a toolset that is registered is found in the data folder.
    const kept = marker();
    await hostile.attacker.toolsets.create({ hostTools: { tapedeck_ops: { run: { description: kept } } } });
    assert.equal(dataFolderHolds(kept), true, "a registered toolset is found in the data folder");
    // `__proto__` never reaches the engine: the body parser refuses it.
    const proto = await fetch(`${hostile.server.url}/v1/toolsets`, {
      method: "POST",
      headers: { authorization: `Bearer ${hostile.attackerKey}`, "content-type": "application/json" },
      body: '{ "hostTools": { "__proto__": { "run": {} } } }',
    });
    assert.equal(proto.status, 400);
    await hostile.assertStillServing();
  });

  it("groups named constructor, toString, hasOwnProperty… register and run; a host tool named constructor is served by a worker, not by Object.prototype", async () => {
    const groups = ["constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"] as const;
    const registered = await hostile.attacker.toolsets.create({
      hostTools: { ...Object.fromEntries(groups.map((g) => [g, { call: { description: `Calls ${g}.` } }])), probe: { constructor: {} } },
    });
    const tools = {
      ...Object.fromEntries(groups.map((g) => [g, { call: () => Promise.resolve(`${g} by the worker`) }])),
      probe: { constructor: () => Promise.resolve("probe.constructor by the worker") },
    };
    const worker: WorkerHandle = hostile.attacker.worker({ tools, toolset: registered.id, pollWaitMs: 1_000, onError: () => {} }).start();
    try {
      const source = `import { ${groups.join(", ")}, probe } from "tapedeck:tools";
export default async () => [${groups.map((g) => `await ${g}.call()`).join(", ")}, await probe.constructor({})];`;
      const started = await hostile.attacker.runs.start({ toolset: registered.id, source });
      assert.equal(started.kind, "started", JSON.stringify(started));
      const run = await hostile.attacker.runs.get(started.kind === "started" ? started.run.id : "", { wait: 30 });
      // Before: the server's host module "answered" probe.constructor with Object.prototype.constructor ({}).
      assert.deepEqual(run.output, [...groups.map((g) => `${g} by the worker`), "probe.constructor by the worker"], JSON.stringify(run));
    } finally {
      await worker.stop();
    }
    await hostile.assertStillServing();
  });

  it("toolset bodies holding a secret are refused with the field named and what to do instead; the secret is stored nowhere", async () => {
    const github = "ghp_R2d2C3poBb8Luke7Leia9Han4Solo1Chewie";
    const slack = "xoxb-1234-5678-DarthVaderIsHere";
    const password = "Tr0ub4dor-and-3";
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    const cases: [unknown, RegExp][] = [
      [
        { mcpServers: { gh: { url: "https://mcp.example.com/mcp", headers: { "X-Api": github } } } },
        /^mcpServers\.gh\.headers\["X-Api"\] holds what looks like a secret \(a github token\)/,
      ],
      [
        { mcpServers: { db: { url: `https://mallory:${password}@mcp.example.com/mcp` } } },
        /^mcpServers\.db\.url holds what looks like a secret \(a password in a URL's user info\)/,
      ],
      [{ mcpServers: { db: { url: `https://mcp.example.com/mcp?access_token=${password}` } } }, /^mcpServers\.db\.url holds .*query parameter "access_token"/],
      [
        { hostTools: { crm: { lookup: { description: `Use ${slack} to call the CRM.` } } } },
        /^hostTools\.crm\.lookup\.description holds what looks like a secret \(a slack token\)/,
      ],
      [
        { hostTools: { crm: { lookup: { inputSchema: { type: "object", properties: { auth: { type: "string", default: jwt } } } } } } },
        /^hostTools\.crm\.lookup\.inputSchema\.properties\.auth\.default holds what looks like a secret \(a jwt\)/,
      ],
    ];
    for (const [body, expected] of cases) {
      const error = await failure(hostile.attacker.toolsets.create(body as never));
      assert.deepEqual([error.status, error.code], [422, "invalid_toolset"], error.message);
      assert.match(error.message, expected);
      assert.match(error.message, /anyone who knows its id can read it, so it holds no secret; nothing was registered/);
      assert.match(error.message, /vault|remove the secret/);
    }
    // The operator's stdio server with a connection string in its env (the key shape is not a secret name).
    const operator = await failure(
      hostile.admin.toolsets.create({
        mcpServers: { pg: { command: "postgres-mcp", env: { POSTGRES_CONNECTION_STRING: `postgresql://admin:${password}@db.internal:5432/app` } } },
      }),
    );
    assert.equal(operator.status, 422);
    assert.match(
      operator.message,
      /^mcpServers\.pg\.env\.POSTGRES_CONNECTION_STRING holds what looks like a secret \(a password in a URL's user info\).*reference to Tapedeck's environment.*vault credential/,
    );
    for (const secret of [github, slack, password, jwt]) {
      assert.equal(dataFolderHolds(secret), false, `${secret} reached the data folder`);
      assert.ok(!hostile.server.stderr().includes(secret), `${secret} is in the server's output`);
    }
    await hostile.assertStillServing();
  });

  it("a result keyed by someone's data does not put their data in the declarations every user of the toolset reads", async () => {
    const source = `import { probe } from "tapedeck:tools";
export default async () => probe.echo({ "victim@example.com": { orders: 3 }, "0b6f2a9c41d8e7f3a5b2c6d9e1f4a7b3c8d2e5f1": { orders: 1 } });`;
    const started = await hostile.attacker.runs.start({ toolset: hostile.toolset, source });
    assert.equal(started.kind, "started");
    assert.equal((await hostile.attacker.runs.get(started.kind === "started" ? started.run.id : "", { wait: 30 })).status, "completed");
    const declarations = await hostile.admin.toolsets.declarations(hostile.toolset);
    for (const text of [declarations.typescript, declarations.prompt]) {
      assert.ok(!text.includes("victim@example.com") && !text.includes("0b6f2a9c41d8"), text);
    }
    // A record of its values (the victim's own `{ n }` results are of that toolset too).
    assert.match(declarations.prompt, /probe\.echo\(.*\) → \{ \[key: string\]: \{ orders: number \} \| number \} \(observed\)/);
    await hostile.assertStillServing();
  });

  it("a token with junk appended, or a key limited to labels, cannot act as an end user", async () => {
    const { token } = await hostile.attacker.tokens.create({ namespace: "mallory", ttlSeconds: 60 });
    assert.ok((await hostile.server.client(token).runs.list()).every((run) => run.namespace === "mallory"));
    for (const changed of [`${token}x`, `${token}!!`, `${token}AAAA`]) {
      const response = await fetch(`${hostile.server.url}/v1/runs`, { headers: { authorization: `Bearer ${changed}` } });
      assert.equal(response.status, 401, changed);
    }
    const labelled = hostile.server.client(await createKey(hostile.server.dataDir, "--label", "team=red"));
    const refused = await failure(labelled.runs.start({ toolset: hostile.toolset, source: "export default async () => 1;", namespace: "victim" }));
    assert.deepEqual([refused.status, refused.code], [403, "forbidden"]);
    assert.match(refused.message, /cannot act as the end user "victim"/);
    assert.deepEqual(await hostile.admin.runs.list({ namespace: "victim", labels: { team: "red" } }), [], "no run was started as the victim");
    await hostile.assertStillServing();
  });

  it("a run row forged with a wake time of 1e300 does not break listing: the API and tapedeck runs list every run", async () => {
    const started = await hostile.admin.runs.start({
      toolset: hostile.toolset,
      source: `export default async () => { await sleep("1h"); return 1; };`,
      namespace: "victim",
    });
    const id = started.kind === "started" ? started.run.id : assert.fail("refused");
    assert.equal((await hostile.admin.runs.get(id, { wait: 30 })).status, "waiting");
    const store = SqliteStore.open({ path: join(hostile.server.dataDir, "tapedeck.db") });
    try {
      await store.append(id, [], { updatedAt: Date.now(), wakeAt: 1e300, waits: [{ kind: "sleep", seq: 1, until: 1e300 }] });
    } finally {
      await store.close();
    }
    const listed = await hostile.admin.runs.list({ limit: 100 });
    assert.ok(listed.some((run) => run.id === id) && listed.length > 1, JSON.stringify(listed.map((r) => r.id)));
    const io = capture();
    assert.equal(await cli(["runs", "--data", hostile.server.dataDir, "--limit", "100"], io), 0, io.err.join("\n"));
    assert.ok(
      io.out.some((line) => line.startsWith(id) && line.includes("damaged") && line.includes("wake time 1e+300 is not a time")),
      io.out.join("\n"),
    );
    assert.ok(io.out.filter((line) => line.includes("completed")).length > 0, "the other runs are listed");
    await hostile.admin.runs.cancel(id);
    await hostile.assertStillServing();
  });
});
