import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Run, Tapedeck } from "@tapedeck/sdk";
import { SECRET_FILE } from "./auth/server-secret.js";
import { TokenSigner } from "./auth/tokens.js";
import { ADMIN_KEY_FILE } from "../cli/admin-key-notice.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { failure } from "./test-support/failure.js";

/**
 * Tenant isolation through the SDK against one real server: keys limited to a namespace or to
 * labels, end-user tokens, and the `namespace()` client never see or touch runs outside their
 * scope, which answer exactly like runs that do not exist. Forged and expired tokens are 401.
 */
let server: ServeChild;
let admin: Tapedeck;
let toolset: string;
let runs: Record<"alice" | "bob" | "red" | "blue", Run>;
let keys: Record<"alice" | "red", string>;

const TOOLSET = { hostTools: { ops: { deploy: { description: "Deploys." } } }, policies: { "ops.deploy": { approval: true } } };

/** A script that parks until signalled, so runs stay open to every action. */
const WAITING = `export default async () => signal("go");`;

before(async () => {
  server = await startServeChild({ hostModule: `export const ops = { deploy: async () => "deployed" };` });
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create(TOOLSET)).id;
  const start = async (client: Tapedeck, options: { namespace?: string; labels?: Record<string, string> } = {}) => {
    const started = await client.runs.start({ toolset, source: WAITING, ...options });
    assert.equal(started.kind, "started");
    return started.kind === "started" ? started.run : assert.fail();
  };
  runs = {
    alice: await start(admin, { namespace: "alice" }),
    bob: await start(admin, { namespace: "bob" }),
    red: await start(admin, { labels: { team: "red" } }),
    blue: await start(admin, { labels: { team: "blue" } }),
  };
  keys = { alice: await createKey(server.dataDir, "--namespace", "alice"), red: await createKey(server.dataDir, "--label", "team=red") };
});

after(async () => {
  await server.stop();
  server.cleanup();
});

/** The raw answer to a GET, for comparing bodies byte for byte. */
async function rawGet(path: string, credential: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${credential}` } });
  return { status: response.status, body: await response.text() };
}

/** Every action on a run outside the client's scope is the 404 of a missing run, and changes nothing. */
async function assertInvisible(client: Tapedeck, credential: string, run: Run): Promise<void> {
  const before = await admin.runs.get(run.id);
  const missing = `No run ${run.id}.`;
  const expected = JSON.stringify({ error: { code: "not_found", message: missing } });
  assert.deepEqual(await rawGet(`/v1/runs/${run.id}`, credential), { status: 404, body: expected });
  assert.deepEqual(await rawGet(`/v1/runs/${run.id}/journal`, credential), { status: 404, body: expected });
  assert.deepEqual(await rawGet(`/v1/approvals?run=${run.id}`, credential), { status: 404, body: expected });
  // Each sent only when awaited: a refusal left pending would be an unhandled rejection.
  for (const call of [
    () => client.runs.get(run.id, { wait: 5 }),
    () => client.runs.cancel(run.id),
    () => client.runs.signal(run.id, { name: "go", payload: "intruder" }),
    () => client.runs.fork(run.id, { source: WAITING }),
    () => client.approvals.approve(run.id, 1),
    () => client.approvals.reject(run.id, 1),
  ]) {
    const error = await failure(call());
    assert.deepEqual([error.status, error.code, error.message], [404, "not_found", missing]);
  }
  assert.deepEqual(await admin.runs.get(run.id), before, "the run is untouched: not cancelled, signalled or decided");
}

describe("tenant isolation", () => {
  it("a missing run's 404 is what an out-of-scope run answers, byte for byte", async () => {
    const missing = await rawGet("/v1/runs/run_doesnotexist", server.adminKey!);
    assert.deepEqual(missing, { status: 404, body: JSON.stringify({ error: { code: "not_found", message: "No run run_doesnotexist." } }) });
  });

  it("a key limited to a namespace sees and acts only on that namespace's runs; its runs get it", async () => {
    const alice = server.client(keys.alice);
    assert.deepEqual(
      (await alice.runs.list()).map((r) => r.id),
      [runs.alice.id],
    );
    assert.equal((await alice.runs.get(runs.alice.id)).namespace, "alice");
    for (const other of [runs.bob, runs.red, runs.blue]) await assertInvisible(alice, keys.alice, other);
    assert.deepEqual(await alice.runs.list({ namespace: "bob" }), [], "a filter outside the scope matches nothing");
    const started = await alice.runs.start({ toolset, source: WAITING, labels: { conversation: "1" } });
    assert.equal(started.kind === "started" ? started.run.namespace : undefined, "alice");
    const forbidden = await failure(alice.runs.start({ toolset, source: WAITING, namespace: "bob" }));
    assert.deepEqual([forbidden.status, forbidden.code], [403, "forbidden"]);
    assert.equal((await failure(alice.namespace("bob").runs.list())).status, 403, "the namespace header cannot widen a key");
  });

  it("a key limited to labels sees only runs carrying them, and labels the runs it starts", async () => {
    const red = server.client(keys.red);
    assert.deepEqual(
      (await red.runs.list()).map((r) => r.id),
      [runs.red.id],
    );
    for (const other of [runs.alice, runs.bob, runs.blue]) await assertInvisible(red, keys.red, other);
    const started = await red.runs.start({ toolset, source: WAITING, labels: { agent: "a" } });
    assert.deepEqual(started.kind === "started" ? started.run.labels : undefined, { agent: "a", team: "red" });
    assert.equal((await failure(red.runs.start({ toolset, source: WAITING, labels: { team: "blue" } }))).code, "forbidden");
    assert.deepEqual(await red.runs.list({ labels: { team: "blue" } }), []);
  });

  it("a key limited to labels acts as no end user: it cannot start, fork or mint a token in a namespace", async () => {
    const red = server.client(keys.red);
    const before = (await admin.runs.list({ namespace: "alice" })).map((r) => r.id);
    // A run of alice's that the red key sees (it carries team=red): forking it would run new code as alice.
    const shared = await admin.runs.start({ toolset, source: WAITING, namespace: "alice", labels: { team: "red" } });
    const sharedId = shared.kind === "started" ? shared.run.id : assert.fail();
    assert.equal((await red.runs.get(sharedId)).namespace, "alice", "the red key sees the run");
    for (const [what, call] of [
      ["start with namespace", () => red.runs.start({ toolset, source: WAITING, namespace: "alice" })],
      ["start under the namespace header", () => red.namespace("alice").runs.start({ toolset, source: WAITING })],
      ["fork", () => red.runs.fork(sharedId, { source: WAITING })],
      ["token", () => red.tokens.create({ namespace: "alice" })],
    ] as const) {
      const error = await failure((call as () => Promise<unknown>)());
      assert.deepEqual([error.status, error.code], [403, "forbidden"], what);
      assert.match(error.message, /limited to labels, not to a namespace, so it cannot act as the end user "alice"/, what);
    }
    assert.deepEqual(
      (await admin.runs.list({ namespace: "alice" })).map((r) => r.id),
      [sharedId, ...before],
      "no run was started in alice's namespace",
    );
    // Nor does it hold alice's credentials (credential-access.ts); `POST /v1/test` runs against mocks, in no namespace.
    const credential = await failure(
      red.credentials.set({ name: "ALICE", kind: "bearer", value: "s3cret-value", hosts: ["api.example.com"], toolset, namespace: "alice" }),
    );
    assert.deepEqual([credential.status, credential.code], [403, "forbidden"]);
    // Without a namespace it still starts its own runs, and a key limited to alice still acts as alice.
    assert.equal((await red.runs.start({ toolset, source: WAITING })).kind, "started");
    const alice = server.client(keys.alice);
    const forked = await alice.runs.fork(sharedId, { source: WAITING });
    assert.equal(forked.kind === "started" ? forked.run.namespace : undefined, "alice");
    assert.equal((await alice.tokens.create({ namespace: "alice" })).namespace, "alice");
    await admin.runs.cancel(sharedId);
    if (forked.kind === "started") await admin.runs.cancel(forked.run.id);
  });

  it("namespace(userId) on an unlimited key acts for that end user only", async () => {
    const carol = admin.namespace("carol");
    const started = await carol.runs.start({ toolset, source: WAITING });
    assert.equal(started.kind === "started" ? started.run.namespace : undefined, "carol");
    assert.deepEqual(
      (await carol.runs.list()).map((r) => r.namespace),
      ["carol"],
    );
    const error = await failure(carol.runs.get(runs.bob.id));
    assert.deepEqual([error.status, error.message], [404, `No run ${runs.bob.id}.`]);
  });

  it("an end user's token: minted by a key within its scope, limited to its namespace and labels, cannot mint tokens", async () => {
    const issued = await admin.tokens.create({ namespace: "alice", labels: { conversation: "1" }, ttlSeconds: 600 });
    assert.match(issued.token, /^tdt_/);
    assert.deepEqual(issued.labels, { conversation: "1" });
    const user = server.client(issued.token);
    const visible = await user.runs.list();
    assert.ok(visible.length > 0 && visible.every((r) => r.namespace === "alice" && r.labels.conversation === "1"));
    await assertInvisible(user, issued.token, runs.alice); // alice's, but without the token's label
    await assertInvisible(user, issued.token, runs.bob);
    assert.equal((await failure(user.tokens.create({ namespace: "alice" }))).status, 403);
    assert.equal((await failure(user.namespace("bob").runs.list())).status, 403);
    assert.equal((await failure(server.client(keys.alice).tokens.create({ namespace: "bob" }))).status, 403, "a key mints only inside its scope");
    assert.equal((await server.client(keys.alice).tokens.create({ namespace: "alice" })).namespace, "alice");
  });

  it("expired, forged and unknown credentials are 401 with a WWW-Authenticate challenge", async () => {
    const signer = new TokenSigner(Buffer.from(readFileSync(join(server.dataDir, SECRET_FILE), "utf8").trim(), "hex"));
    const expired = signer.mint({ v: 1, ns: "alice", labels: {}, exp: Date.now() - 1000, key: "key_test" });
    const expiredError = await failure(server.client(expired).runs.list());
    assert.deepEqual([expiredError.status, expiredError.code], [401, "unauthorized"]);
    assert.match(expiredError.message, /expired/);

    const genuine = signer.mint({ v: 1, ns: "alice", labels: {}, exp: Date.now() + 60_000, key: "key_test" });
    const [body, signature] = genuine.slice(4).split(".") as [string, string];
    const widened = Buffer.from(JSON.stringify({ v: 1, ns: "bob", labels: {}, exp: Date.now() + 60_000, key: "key_test" })).toString("base64url");
    const foreign = new TokenSigner(Buffer.alloc(32, 7)).mint({ v: 1, ns: "alice", labels: {}, exp: Date.now() + 60_000, key: "key_test" });
    // A changed signature: its first character flipped (the last one carries unused bits, and "AA" can be the signature's own ending).
    const tampered = `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
    for (const credential of [`tdt_${widened}.${signature}`, `tdt_${body}.${tampered}`, foreign, "tdt_garbage", "tdk_unknown", "nonsense"]) {
      const response = await fetch(`${server.url}/v1/runs`, { headers: { authorization: `Bearer ${credential}` } });
      assert.equal(response.status, 401, credential);
      assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="tapedeck"');
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, "unauthorized");
    }
    assert.equal((await fetch(`${server.url}/v1/runs`)).status, 401, "no credential");
    assert.ok(
      (await server.client(genuine).runs.list()).every((r) => r.namespace === "alice"),
      "the genuine token works",
    );
  });

  it("limited callers cannot register toolsets that run commands or read the server's environment", async () => {
    const alice = server.client(keys.alice);
    const stdio = await failure(alice.toolsets.create({ mcpServers: { fs: { command: "rm", args: ["-rf", "/"] } } }));
    assert.deepEqual([stdio.status, stdio.code], [403, "forbidden"]);
    const env = await failure(
      alice.toolsets.create({ mcpServers: { gh: { url: "https://evil.example.com/mcp", headers: { authorization: "Bearer ${HOME}" } } } }),
    );
    assert.equal(env.status, 403);
    assert.equal((await alice.toolsets.create(TOOLSET)).id, toolset, "a toolset without commands or environment references is fine");
  });

  it("approvals list only the caller's runs", async () => {
    const source = `import { ops } from "tapedeck:tools";\nexport default () => ops.deploy({});`;
    const ids: string[] = [];
    for (const namespace of ["alice", "bob"]) {
      const started = await admin.runs.start({ toolset, source, namespace });
      const id = started.kind === "started" ? started.run.id : assert.fail();
      assert.equal((await admin.runs.get(id, { wait: 30 })).status, "waiting");
      ids.push(id);
    }
    const [aliceRun, bobRun] = ids as [string, string];
    assert.deepEqual(
      (await server.client(keys.alice).approvals.pending()).map((a) => a.runId),
      [aliceRun],
    );
    const all = (await admin.approvals.pending()).map((a) => a.runId);
    assert.ok(all.includes(aliceRun) && all.includes(bobRun));
    assert.equal((await failure(server.client(keys.alice).approvals.approve(bobRun, 1))).status, 404);
    assert.equal((await server.client(keys.alice).approvals.approve(aliceRun, 1)).id, aliceRun);
    assert.equal((await admin.runs.get(bobRun)).status, "waiting", "bob's call is still waiting for a decision");
  });

  it("after a restart: no new admin key is printed, keys still work, and no key is stored in clear", async () => {
    await server.stop();
    for (const file of readdirSync(server.dataDir)) {
      // Except the one file that hands the admin key to the operator (mode 0600, to delete once read: admin-key-notice.ts).
      if (file === ADMIN_KEY_FILE) continue;
      const bytes = readFileSync(join(server.dataDir, file));
      for (const key of [server.adminKey!, keys.alice, keys.red]) assert.ok(!bytes.includes(key), `${file} holds a key in clear`);
    }
    const unreachable = await failure(admin.runs.list());
    assert.deepEqual([unreachable.status, unreachable.code], [0, "unreachable"]);
    server = await startServeChild({ dataDir: server.dataDir });
    assert.doesNotMatch(server.stderr(), /tdk_/);
    assert.equal((await server.client(keys.alice).runs.get(runs.alice.id)).status, "waiting", "the parked run survived the restart");
  });
});
