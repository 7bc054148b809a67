import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { once } from "node:events";
import { readdirSync, readFileSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Tapedeck, type Fetch } from "@tapedeck/sdk";
import { TEST_ALLOW_LOOPBACK_ENV } from "../cli/commands/serve.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { failure } from "./test-support/failure.js";

/**
 * Credentials through the SDK against a real `tapedeck serve`: a credential set over the API is
 * injected into a script's `fetch` to its host; its value never comes back (not from `list`,
 * not from an error, not in a run, its journal or any answer), and it is nowhere in the data
 * folder; a caller limited to a namespace sees, sets and deletes only its own.
 */
const SECRET = "api_cred_secret_7d1e9a44";
const ALICE_SECRET = "api_cred_alice_3b8c21f0";
const BOB_SECRET = "api_cred_bob_c94e0d17";
const REFUSED_SECRET = "api_cred_refused_58af6b3e";
const SECRETS = [SECRET, ALICE_SECRET, BOB_SECRET, REFUSED_SECRET];
const MARKER = "api_cred_marker_not_secret_2f6d";

let server: ServeChild;
let echo: Server;
let echoUrl: string;
let received: (string | undefined)[];
let toolset: string;
let admin: Tapedeck;
/** Every answer body of the test's clients, by request. */
const answers: string[] = [];

/** A `fetch` that keeps a copy of every answer body. */
const recording: Fetch = async (input, init) => {
  const response = await fetch(input, init);
  answers.push(`${init.method ?? "GET"} ${input} → ${response.status}: ${await response.clone().text()}`);
  return response;
};
const client = (apiKey: string, namespace?: string) =>
  new Tapedeck({ baseUrl: server.url, apiKey, fetch: recording, ...(namespace === undefined ? {} : { namespace }) });

before(async () => {
  received = [];
  // Echoes the Authorization it got, as a careless API would.
  echo = createServer((req, res) => {
    received.push(req.headers.authorization);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ auth: req.headers.authorization ?? null }));
  });
  echo.listen(0, "127.0.0.1");
  await once(echo, "listening");
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo`;
  // The most verbose log: every line the server can write is scanned for the secrets.
  server = await startServeChild({ env: { [TEST_ALLOW_LOOPBACK_ENV]: "1" }, args: ["--log-level", "trace", "--log-format", "json"] });
  admin = client(server.adminKey!);
  toolset = (await admin.toolsets.create({ http: { allow: ["127.0.0.1"] } })).id;
});

after(async () => {
  await server.stop();
  server.cleanup();
  echo.close();
});

const SCRIPT = () => `export default async () => { const r = await fetch("${echoUrl}"); console.log("${MARKER}"); return await r.json(); };`;

/** Starts the script with `td` and waits for its end. */
async function runFetch(td: Tapedeck): Promise<{ id: string; output: unknown }> {
  const started = await td.runs.start({ toolset, source: SCRIPT() });
  if (started.kind !== "started") return assert.fail("refused");
  const run = await td.runs.get(started.run.id, { wait: 30 });
  assert.equal(run.status, "completed", JSON.stringify(run.error));
  return { id: run.id, output: run.output };
}

describe("credentials over the API", () => {
  it("a toolset's bearer credential is injected into fetch and never comes back", async () => {
    const set = await admin.credentials.set({ name: "API", kind: "bearer", value: SECRET, hosts: ["127.0.0.1"], toolset });
    assert.deepEqual({ ...set, createdAt: 0, updatedAt: 0 }, { name: "API", kind: "bearer", hosts: ["127.0.0.1"], toolset, createdAt: 0, updatedAt: 0 });
    const { id, output } = await runFetch(admin);
    assert.equal(received.at(-1), `Bearer ${SECRET}`);
    assert.deepEqual(output, { auth: "Bearer [redacted: secret API]" });
    const journal = JSON.stringify(await admin.runs.journal(id));
    assert.ok(journal.includes(MARKER), "control: the journal holds what the script logged");
    assert.ok(!journal.includes(SECRET));
    assert.deepEqual(
      (await admin.credentials.list()).map((c) => c.name),
      ["API"],
    );
  });

  it("refused writes say what is wrong without quoting the value", async () => {
    // Each sent only when awaited: a refusal left pending would be an unhandled rejection.
    const attempts: (() => Promise<unknown>)[] = [
      () => admin.credentials.set({ name: "bad name!", kind: "bearer", value: REFUSED_SECRET, hosts: ["127.0.0.1"], toolset }),
      () => admin.credentials.set({ name: "X", kind: "bearer", value: REFUSED_SECRET, hosts: ["http://127.0.0.1/"], toolset }),
      () => admin.credentials.set({ name: "X", kind: "bearer", value: `${REFUSED_SECRET}\n`, hosts: ["127.0.0.1"], toolset }),
      () =>
        admin.credentials.set({
          name: "X",
          kind: "basic",
          value: { username: REFUSED_SECRET, password: REFUSED_SECRET, extra: REFUSED_SECRET } as never,
          hosts: ["127.0.0.1"],
          toolset,
        }),
      () => admin.credentials.set({ name: "X", kind: "headers", value: { "Bad Header": REFUSED_SECRET }, hosts: ["127.0.0.1"], toolset }),
      () => admin.credentials.set({ name: "X", kind: "query", value: REFUSED_SECRET as never, hosts: ["127.0.0.1"], toolset }),
      () => admin.credentials.set({ name: "X", kind: "bearer", value: REFUSED_SECRET, hosts: ["127.0.0.1"], toolset: "ts_missing" }),
      () => admin.credentials.set({ name: "X", kind: "bearer", value: REFUSED_SECRET, hosts: ["127.0.0.1"], run: "run_missing" }),
      () => admin.credentials.set({ name: "X", kind: "bearer", value: REFUSED_SECRET, hosts: ["127.0.0.1"] } as never),
    ];
    for (const attempt of attempts) {
      const error = await failure(attempt());
      assert.ok(error.status === 400 || error.status === 404, `${error.status} ${error.message}`);
      assert.ok(!error.message.includes(REFUSED_SECRET), error.message);
    }
    assert.deepEqual(
      (await admin.credentials.list()).map((c) => c.name),
      ["API"],
      "nothing was set",
    );
  });

  it("an end user's credential wins over the toolset's for their runs; namespace callers see only their own", async () => {
    const aliceKey = await createKey(server.dataDir, "--namespace", "alice");
    const alice = client(aliceKey);
    const bob = admin.namespace("bob");
    assert.equal((await alice.credentials.set({ name: "MINE", kind: "bearer", value: ALICE_SECRET, hosts: ["127.0.0.1"], toolset })).namespace, "alice");
    assert.equal((await bob.credentials.set({ name: "MINE", kind: "bearer", value: BOB_SECRET, hosts: ["127.0.0.1"], toolset })).namespace, "bob");
    await runFetch(alice);
    assert.equal(received.at(-1), `Bearer ${ALICE_SECRET}`);
    await runFetch(bob);
    assert.equal(received.at(-1), `Bearer ${BOB_SECRET}`);

    const view = async (td: Tapedeck) => (await td.credentials.list()).map((c) => `${c.name}@${c.namespace ?? "-"}`).sort();
    assert.deepEqual(await view(alice), ["MINE@alice"]);
    assert.deepEqual(await view(bob), ["MINE@bob"]);
    assert.deepEqual(await view(admin), ["API@-", "MINE@alice", "MINE@bob"]);

    // Another namespace's credential and a missing one answer alike.
    const theirs = await failure(alice.credentials.delete({ name: "MINE", toolset, namespace: "bob" }));
    const missing = await failure(alice.credentials.delete({ name: "NOPE", toolset }));
    assert.deepEqual([theirs.status, theirs.code, theirs.message.replace("MINE", "NOPE")], [missing.status, missing.code, missing.message]);
    assert.equal(theirs.status, 404);
    assert.equal((await failure(alice.credentials.delete({ name: "API", toolset: toolset }))).status, 404, "its own namespace's MINE only; no toolset-wide");

    // Placing: another namespace or the toolset's own is 403; a run it cannot see is a missing run.
    assert.equal(
      (await failure(alice.credentials.set({ name: "X", kind: "bearer", value: ALICE_SECRET, hosts: ["127.0.0.1"], toolset, namespace: "bob" }))).status,
      403,
    );
    assert.equal(
      (
        await failure(
          client(server.adminKey!, "alice").credentials.set({
            name: "X",
            kind: "bearer",
            value: ALICE_SECRET,
            hosts: ["127.0.0.1"],
            toolset,
            namespace: "bob",
          }),
        )
      ).status,
      403,
    );
    const bobRun = await bob.runs.start({ toolset, source: `export default async () => signal("go");` });
    const bobRunId = bobRun.kind === "started" ? bobRun.run.id : assert.fail("refused");
    const hidden = await failure(alice.credentials.set({ name: "X", kind: "bearer", value: ALICE_SECRET, hosts: ["127.0.0.1"], run: bobRunId }));
    assert.deepEqual([hidden.status, hidden.message], [404, `No run ${bobRunId}.`]);
    assert.equal((await bob.credentials.set({ name: "RUN", kind: "bearer", value: BOB_SECRET, hosts: ["127.0.0.1"], run: bobRunId })).run, bobRunId);
    assert.ok(!(await view(alice)).some((c) => c.startsWith("RUN")));
    assert.equal((await failure(alice.credentials.delete({ name: "RUN", run: bobRunId }))).message, "No credential RUN in that scope.");
    await bob.credentials.delete({ name: "RUN", run: bobRunId });

    // An end user's token manages its own namespace's credentials; rotation needs an unlimited key.
    const token = (await admin.tokens.create({ namespace: "alice", ttlSeconds: 300 })).token;
    const byToken = client(token);
    assert.deepEqual(await view(byToken), ["MINE@alice"]);
    await byToken.credentials.delete({ name: "MINE", toolset });
    assert.deepEqual(await view(alice), []);
    assert.equal((await failure(alice.credentials.rotateKey())).status, 403);
    assert.equal((await failure(byToken.credentials.rotateKey())).status, 403);
  });

  it("rotating the master key keeps every credential working", async () => {
    const rotated = await admin.credentials.rotateKey();
    assert.equal(rotated.rewrapped, 2);
    await runFetch(admin);
    assert.equal(received.at(-1), `Bearer ${SECRET}`);
    await admin.credentials.delete({ name: "API", toolset });
    await runFetch(admin);
    assert.equal(received.at(-1), undefined, "deleted: nothing injected");
  });

  it("no secret is in any answer, the server's output or the data folder", async () => {
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(openapi.paths["/v1/credentials"] && openapi.paths["/v1/credentials/{name}"] && openapi.paths["/v1/credentials/rotate-key"]);
    const runs = await admin.runs.list({ limit: 100 });
    for (const run of runs) await admin.runs.journal(run.id);
    assert.equal(await server.stop(), 0);
    const found: string[] = [];
    const scan = (where: string, text: string | Buffer) => {
      for (const secret of SECRETS) if (text.includes(secret)) found.push(`${secret} in ${where}`);
    };
    answers.forEach((body, i) => scan(`answer ${i}`, body));
    scan("server stderr (its log included)", server.stderr());
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
    for (const file of files(server.dataDir)) scan(file, readFileSync(file));
    assert.deepEqual(found, []);
    assert.ok(
      answers.some((a) => a.includes(MARKER)),
      "control: the scan sees what runs logged",
    );
    assert.match(server.stderr(), /"path":"\/v1\/credentials".*"msg":"request"/, "control: the scan reads the server's log, one line per request");
    assert.match(server.stderr(), /"msg":"run ended"/, "control: and its run lines");
    assert.ok(
      files(server.dataDir).some((f) => readFileSync(f).includes(MARKER)),
      "control: the scan reads the data folder",
    );
  });
});
