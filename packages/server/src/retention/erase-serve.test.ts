import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { TapedeckError, type Tapedeck } from "@tapedeck/sdk";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * An end user's erasure through a real server child process, on SQLite and PostgreSQL, with the
 * SDK (`td.namespaces.erase`) and the CLI (`tapedeck namespaces erase --url`): a key limited by
 * labels, or to another namespace, and an end user's token are refused (403) saying what it takes; a dry run counts what
 * the erasure then deletes; the erasure is refused (409) while a run of the namespace waits and
 * cancels it with `cancel`; the namespace's runs then answer as missing, another's are intact.
 * Then, the server stopped, the CLI erases on its data folder (or store) directly.
 */
const BIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/** `tapedeck <args>` with `env`; resolves with its exit code, stdout and stderr. */
async function cli(env: Readonly<Record<string, string>>, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, out: out.trim(), err: err.trim() };
}

async function ok(env: Readonly<Record<string, string>>, ...args: string[]): Promise<string> {
  const result = await cli(env, ...args);
  assert.equal(result.code, 0, `tapedeck ${args.join(" ")}: ${result.err}`);
  return result.out;
}

const refusedWith = (status: number, message: RegExp) => (error: unknown) => TapedeckError.is(error) && error.status === status && message.test(error.message);

async function eraseThroughServer(server: ServeChild, cliEnv: Readonly<Record<string, string>>, cliStore: readonly string[], compacted: RegExp): Promise<void> {
  const adminKey = server.adminKey ?? assert.fail("the first start prints the admin key");
  const admin: Tapedeck = server.client(adminKey);
  const toolset = (await admin.toolsets.create({ hostTools: { shop: { price: {} } } })).id;
  const start = async (namespace: string, source: string) => {
    const started = await admin.runs.start({ toolset, source, namespace, input: { note: "private" } });
    return started.kind === "started" ? started.run.id : assert.fail("refused");
  };
  const ended = await start("alice", `export default async (input: unknown) => input;`);
  const waiting = await start("alice", `export default async () => signal("go");`);
  const bobs = await start("bob", `export default async () => signal("go");`);
  assert.equal((await admin.runs.get(ended, { wait: 20 })).status, "completed");
  for (const id of [waiting, bobs]) assert.equal((await admin.runs.get(id, { wait: 1 })).status, "waiting");

  const aliceKey = await ok(cliEnv, "keys", "create", "--namespace", "alice", ...cliStore);
  const labelled = await ok(cliEnv, "keys", "create", "--namespace", "alice", "--label", "team=a", ...cliStore);
  const bobKey = await ok(cliEnv, "keys", "create", "--namespace", "bob", ...cliStore);
  const alice = server.client(aliceKey);
  await assert.rejects(server.client(labelled).namespaces.erase("alice"), refusedWith(403, /limited to labels \(team\).*without labels/));
  await assert.rejects(server.client(bobKey).namespaces.erase("alice"), refusedWith(403, /limited to namespace "bob".*exactly that namespace/));

  const { token } = await alice.tokens.create({ namespace: "alice" });
  await assert.rejects(server.client(token).namespaces.erase("alice"), refusedWith(403, /token cannot erase/));

  const dry = await alice.namespaces.erase("alice", { dryRun: true });
  assert.deepEqual([dry.dryRun, dry.runs, dry.cancelled], [true, 2, [waiting]]);
  const url = { ...cliEnv, TAPEDECK_API_KEY: aliceKey };
  const dryLine = await ok(url, "namespaces", "erase", "alice", "--dry-run", "--url", server.url);
  assert.match(
    dryLine,
    new RegExp(
      `^would erase from "alice": 2 run\\(s\\), 0 session\\(s\\), ${dry.journalEntries} journal entries.*nothing was deleted \\(dry run\\)\\n1 run\\(s\\) have not ended \\(${waiting}\\): erase with --cancel`,
    ),
  );

  await assert.rejects(alice.namespaces.erase("alice"), refusedWith(409, new RegExp(`${waiting} \\(waiting.*Nothing was erased: pass cancel`)));
  const refused = await cli(url, "namespaces", "erase", "alice", "--url", server.url);
  assert.notEqual(refused.code, 0);
  assert.match(refused.err, new RegExp(`${waiting}.*pass cancel`));
  assert.equal((await admin.runs.get(waiting)).status, "waiting", "a refused erasure deletes and cancels nothing");

  const erased = await alice.namespaces.erase("alice", { cancel: true });
  const { dryRun: _a, cancelled: _b, batches: _c, compacted: _d, journalEntries, events, ...counts } = erased;
  const { dryRun: _e, cancelled: _f, batches: _g, compacted: _h, journalEntries: dryEntries, events: dryEvents, ...dryCounts } = dry;
  assert.deepEqual(counts, dryCounts, "the dry run counted what was erased");
  assert.equal(journalEntries, dryEntries + 1, "and the cancel's entry");
  // The cancel's run event, unless the outbox fanned it out (to no endpoint) first.
  assert.ok(events === dryEvents || events === dryEvents + 1, `events ${events}, counted ${dryEvents}`);
  assert.deepEqual(erased.cancelled, [waiting]);
  for (const id of [ended, waiting]) await assert.rejects(admin.runs.get(id), refusedWith(404, /./));
  assert.match(await ok(url, "namespaces", "erase", "alice", "--cancel", "--url", server.url), /^erased from "alice": 0 run\(s\), 0 session\(s\)/);

  await admin.runs.signal(bobs, { name: "go", payload: "still here" });
  assert.deepEqual((await admin.runs.get(bobs, { wait: 20 })).output, "still here", "another namespace's runs are intact");

  // With the server stopped, on its data folder (or store) directly: the CLI's engine cancels the parked run itself.
  const parked = await start("bob", `export default async () => signal("go");`);
  assert.equal((await admin.runs.get(parked, { wait: 1 })).status, "waiting");
  await server.stop();
  const direct = await ok(cliEnv, "namespaces", "erase", "bob", "--cancel", ...cliStore);
  assert.match(direct, new RegExp(`^erased from "bob": 2 run\\(s\\), .*\\ncancelled first: ${parked}\\n`));
  assert.match(direct, compacted);
}

describe("erasing an end user through a server (SQLite)", () => {
  it("403 for a label-limited key, a dry run's counts, 409 while a run waits unless cancel: SDK and CLI", async () => {
    const server = await startServeChild({});
    try {
      await eraseThroughServer(server, {}, ["--data", server.dataDir], /the database files were compacted/);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });
});

describeWithPostgres("erasing an end user through a server (PostgreSQL)", (url) => {
  void it("the same on a postgres: store", async () => {
    const schema = freshSchemaName();
    const store = schemaUrl(url, schema);
    const env = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
    const server = await startServeChild({ args: ["--store", store], fresh: true, env });
    try {
      await eraseThroughServer(server, { ...env, TAPEDECK_STORE: store }, [], /not compacted here \(PostgreSQL recycles its own/);
    } finally {
      await server.stop();
      server.cleanup();
      await dropSchema(url, schema);
    }
  });
});
