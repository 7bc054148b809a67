import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { failure } from "../http/test-support/failure.js";
import { createKey } from "../http/test-support/serve-child.js";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Toolsets outside the caller's scope (issue 23, "toolsets have no owner"), through a real
 * `tapedeck serve`: alice's key (namespace alice) and the red team's key (labels team=red) each
 * register a toolset; other tenants' keys and tokens ask for it on every `/v1/toolsets/{id}…`
 * route — enumerated from the OpenAPI document, so a new route not walked here fails — and name
 * it wherever a request takes a toolset (a run, a check, a test, a session's bind, a
 * credential; deriving is `…/tools` and `…/workflows`, as the API takes no `base`). Each answer is byte for byte the one of an unknown id,
 * nothing is made, and the owners, the operator and an operator's shared toolset are unaffected.
 */
let hostile: HostileServer;
const keys: Record<string, string> = {};
const owned: Record<"alice" | "red", string> = { alice: "", red: "" };

/** An id no toolset has: what a toolset outside the caller's scope must look like. */
const MISSING = `ts_${"0".repeat(64)}`;
const SCRIPT = `import { probe } from "tapedeck:tools";\nexport default async () => probe.echo({ n: 1 });`;
const spec = (description: string) => ({ hostTools: { probe: { echo: { description } } } });

before(async () => {
  hostile = await startHostileServer();
  const dir = hostile.server.dataDir;
  keys.alice = await createKey(dir, "--namespace", "alice");
  keys.red = await createKey(dir, "--label", "team=red");
  keys.mallory = hostile.attackerKey;
  keys.blue = await createKey(dir, "--label", "team=blue");
  keys.bobToken = (await hostile.admin.tokens.create({ namespace: "bob", ttlSeconds: 600 })).token;
  owned.alice = (await hostile.server.client(keys.alice).toolsets.create(spec("Alice's echo."))).id;
  owned.red = (await hostile.server.client(keys.red).toolsets.create(spec("The red team's echo."))).id;
});

after(async () => {
  await hostile.close();
});

interface Request {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/** How to ask each `/v1/toolsets/{id}` route about toolset `id`. A route missing here fails the test. */
const BY_ID: Readonly<Record<string, (id: string) => Request>> = {
  "GET /v1/toolsets/{id}": (id) => ({ method: "GET", path: `/v1/toolsets/${id}` }),
  "GET /v1/toolsets/{id}/declarations": (id) => ({ method: "GET", path: `/v1/toolsets/${id}/declarations` }),
  "GET /v1/toolsets/{id}/search": (id) => ({ method: "GET", path: `/v1/toolsets/${id}/search?q=echo` }),
  "POST /v1/toolsets/{id}/tools": (id) => ({
    method: "POST",
    path: `/v1/toolsets/${id}/tools`,
    body: {
      group: "u",
      name: "twice",
      description: "Doubles.",
      code: `export default (input: { n: number }) => ({ n: input.n * 2 });`,
      inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      tests: [{ input: { n: 1 }, output: { n: 2 } }],
    },
  }),
  "POST /v1/toolsets/{id}/workflows": (id) => ({
    method: "POST",
    path: `/v1/toolsets/${id}/workflows`,
    body: { name: "flow", description: "Echoes.", code: SCRIPT, input: { type: "object" }, output: {} },
  }),
};

/** The other requests that name a toolset: each must answer an unreachable one as an unknown one. */
const NAMING: Readonly<Record<string, (id: string, who: string) => Request>> = {
  "start a run": (id) => ({ method: "POST", path: "/v1/runs", body: { toolset: id, source: SCRIPT } }),
  "check a script": (id) => ({ method: "POST", path: "/v1/check", body: { toolset: id, source: SCRIPT } }),
  "test a script": (id) => ({ method: "POST", path: "/v1/test", body: { toolset: id, source: SCRIPT } }),
  "bind a session": (id, who) => ({ method: "POST", path: `/v1/sessions/intruder-${who}/bind`, body: { toolset: id } }),
  "set an end user's credential": (id, who) => ({
    method: "POST",
    path: "/v1/credentials",
    body: { name: "STOLEN", kind: "bearer", value: "intruder-value-0123456789", hosts: ["api.example.com"], toolset: id, ...nsOf(who) },
  }),
};

/** The end user each intruder acts as, for a credential it may manage (its own); a key limited to labels manages none. */
function nsOf(who: string): { namespace?: string } {
  const namespace = ({ alice: "alice", mallory: "mallory", bobToken: "bob" } as Record<string, string>)[who];
  return namespace === undefined ? {} : { namespace };
}

async function ask(request: Request, credential: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${hostile.server.url}${request.path}`, {
    method: request.method,
    headers: { authorization: `Bearer ${credential}`, ...(request.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  return { status: response.status, body: await response.text() };
}

/** Who must not reach whose toolset: tenants side by side, by namespace, by labels, and across the two. */
const INTRUDERS: Readonly<Record<"alice" | "red", readonly string[]>> = { alice: ["mallory", "bobToken", "red"], red: ["blue", "mallory", "alice"] };

/** What the owners and the operator have: nothing an intruder does may change it. */
async function snapshot(): Promise<unknown> {
  return { runs: (await hostile.admin.runs.list()).map((run) => run.id), credentials: await hostile.admin.credentials.list() };
}

describe("toolsets outside the caller's scope (a real server)", () => {
  it("every /v1/toolsets/{id}… route answers another tenant's toolset as an unknown id, byte for byte", async () => {
    const doc = (await (await fetch(`${hostile.server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      path.startsWith("/v1/toolsets/{id}") ? Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`) : [],
    );
    assert.deepEqual(
      routes.filter((route) => !(route in BY_ID)),
      [],
      "a toolset route this test does not walk",
    );
    const before = await snapshot();
    for (const [owner, intruders] of Object.entries(INTRUDERS) as ["alice" | "red", readonly string[]][]) {
      for (const who of intruders) {
        for (const [route, request] of Object.entries(BY_ID)) {
          const missing = await ask(request(MISSING), keys[who]!);
          assert.equal(missing.status, 404, `${who}, ${route} of an unknown toolset: ${missing.body}`);
          const victim = await ask(request(owned[owner]), keys[who]!);
          assert.deepEqual(
            { status: victim.status, body: victim.body.replaceAll(owned[owner], "<id>") },
            { status: 404, body: missing.body.replaceAll(MISSING, "<id>") },
            `${who} on ${owner}'s toolset, ${route}`,
          );
        }
      }
    }
    assert.deepEqual(await snapshot(), before, "nothing was made");
    await hostile.assertStillServing();
  });

  it("a run, a check, a test, a bind or a credential naming it is refused as for an unknown id", async () => {
    const before = await snapshot();
    for (const [owner, intruders] of Object.entries(INTRUDERS) as ["alice" | "red", readonly string[]][]) {
      for (const who of intruders) {
        for (const [what, request] of Object.entries(NAMING)) {
          const missing = await ask(request(MISSING, who), keys[who]!);
          assert.ok(missing.status >= 400, `${who}, ${what} with an unknown toolset: ${missing.body}`);
          const victim = await ask(request(owned[owner], who), keys[who]!);
          assert.deepEqual(
            { status: victim.status, body: victim.body.replaceAll(owned[owner], "<id>") },
            { status: missing.status, body: missing.body.replaceAll(MISSING, "<id>") },
            `${who} on ${owner}'s toolset: ${what}`,
          );
        }
      }
    }
    assert.deepEqual(await snapshot(), before, "no run, credential or session was made");
    await hostile.assertStillServing();
  });

  it("its owner, a narrower scope of its owner, and the operator reach it; an operator's toolset is every tenant's", async () => {
    const alice = hostile.server.client(keys.alice!);
    assert.equal((await alice.toolsets.get(owned.alice)).id, owned.alice);
    const started = await alice.runs.start({ toolset: owned.alice, source: SCRIPT });
    assert.equal(started.kind, "started");
    const token = (await hostile.admin.tokens.create({ namespace: "alice", labels: { conversation: "1" }, ttlSeconds: 600 })).token;
    assert.equal((await hostile.server.client(token).toolsets.get(owned.alice)).id, owned.alice, "alice's end-user token reaches alice's toolset");
    const saved = await ask(BY_ID["POST /v1/toolsets/{id}/tools"]!(owned.alice), token);
    assert.equal(saved.status, 200, saved.body);
    const derived = JSON.parse(saved.body) as { saved: boolean; id: string };
    assert.ok(derived.saved, saved.body);
    assert.equal((await alice.toolsets.get(derived.id)).id, derived.id, "alice's key reaches what her token derived");
    const hidden = await failure(hostile.attacker.toolsets.get(derived.id));
    assert.deepEqual([hidden.status, hidden.code], [404, "not_found"], "the derived toolset is alice's too");
    for (const id of [owned.alice, owned.red, derived.id]) assert.equal((await hostile.admin.toolsets.get(id)).id, id, "the operator reaches every toolset");
    for (const who of ["mallory", "bobToken", "red", "blue"])
      assert.equal((await hostile.server.client(keys[who]!).toolsets.get(hostile.toolset)).id, hostile.toolset, `${who} reaches the operator's toolset`);
    await hostile.assertStillServing();
  });

  it("a tenant registering the same content gets the same id and becomes an owner too; the first owner keeps it", async () => {
    const mallory = hostile.attacker;
    const again = await mallory.toolsets.create(spec("Alice's echo."));
    assert.equal(again.id, owned.alice, "content-addressed: the same content is the same id");
    assert.equal((await mallory.toolsets.get(owned.alice)).id, owned.alice, "mallory holds the content, so she owns it too");
    assert.equal((await hostile.server.client(keys.alice!).toolsets.get(owned.alice)).id, owned.alice);
    assert.equal((await ask(BY_ID["GET /v1/toolsets/{id}"]!(owned.alice), keys.bobToken!)).status, 404, "bob still does not reach it");
  });
});
