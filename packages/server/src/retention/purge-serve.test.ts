import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * `POST /v1/runs/purge` and `tapedeck runs purge` against a real server child process, on SQLite
 * and on PostgreSQL: an ended run goes whole (answered as missing after), a waiting run stays and
 * still ends, a dry run counts and deletes nothing, a key limited to a namespace is refused, and
 * a `before` that is no time is a 400 saying what to write.
 */
const BIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/** `tapedeck <args>` with `env`; resolves with its stdout, rejects if it fails. */
async function cli(env: Readonly<Record<string, string>>, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`tapedeck ${args.join(" ")} failed (${code}): ${err}`);
  return out.trim();
}

async function purge(server: ServeChild, key: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}/v1/runs/purge`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function purgeThroughServer(server: ServeChild, cliEnv: Readonly<Record<string, string>>, cliStore: readonly string[]): Promise<void> {
  const adminKey = server.adminKey ?? assert.fail("the first start prints the admin key");
  const admin: Tapedeck = server.client(adminKey);
  const toolset = (await admin.toolsets.create({ hostTools: { shop: { price: {} } } })).id;
  const ended = await admin.runs.start({ toolset, source: `export default async () => "done";`, namespace: "alice" });
  const waiting = await admin.runs.start({ toolset, source: `export default async () => signal("go");` });
  if (ended.kind !== "started" || waiting.kind !== "started") return assert.fail("refused");
  assert.equal((await admin.runs.get(ended.run.id, { wait: 20 })).status, "completed");
  assert.equal((await admin.runs.get(waiting.run.id, { wait: 1 })).status, "waiting");

  const limited = await cli(cliEnv, "keys", "create", "--namespace", "alice", ...cliStore);
  assert.equal((await purge(server, limited, { before: "0s" })).status, 403);
  const bad = await purge(server, adminKey, { before: "last tuesday" });
  assert.equal(bad.status, 400);
  assert.match(String((bad.body.error as { message: string }).message), /ISO time.*30d/);

  const dry = await purge(server, adminKey, { before: "0s", dryRun: true });
  assert.equal(dry.status, 200, JSON.stringify(dry.body));
  assert.equal(dry.body.dryRun, true);
  assert.equal(dry.body.runs, 1);
  assert.equal((await admin.runs.get(ended.run.id)).status, "completed", "a dry run deletes nothing");
  assert.match(
    await cli(cliEnv, "runs", "purge", "--before", "0s", "--dry-run", ...cliStore),
    /^would purge 1 run\(s\) and 0 session\(s\) \(\d+ journal entries\) ended before .*nothing was deleted/,
  );

  const done = await purge(server, adminKey, { before: "0s" });
  assert.equal(done.status, 200);
  assert.deepEqual([done.body.dryRun, done.body.runs, done.body.sessions], [false, 1, 0]);
  await assert.rejects(admin.runs.get(ended.run.id), (error: Error & { status?: number }) => error.status === 404);
  assert.match(await cli(cliEnv, "runs", "purge", "--before", "0s", ...cliStore), /^purged 0 run\(s\)/);

  await admin.runs.signal(waiting.run.id, { name: "go", payload: "now" });
  assert.deepEqual((await admin.runs.get(waiting.run.id, { wait: 20 })).output, "now");
}

describe("purging ended runs through a server (SQLite)", () => {
  it("the operator purges ended runs, a dry run counts, a namespace's key is refused; the CLI purges the same data folder", async () => {
    const server = await startServeChild({});
    try {
      await purgeThroughServer(server, {}, ["--data", server.dataDir]);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });
});

describeWithPostgres("purging ended runs through a server (PostgreSQL)", (url) => {
  void it("the operator purges ended runs on a postgres: store, and the CLI on TAPEDECK_STORE", async () => {
    const schema = freshSchemaName();
    const store = schemaUrl(url, schema);
    const env = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
    const server = await startServeChild({ args: ["--store", store], fresh: true, env });
    try {
      await purgeThroughServer(server, { ...env, TAPEDECK_STORE: store }, []);
    } finally {
      await server.stop();
      server.cleanup();
      await dropSchema(url, schema);
    }
  });
});
