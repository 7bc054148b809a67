import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * `tapedeck serve --retention <duration>` as a child process, on SQLite and on PostgreSQL: its
 * background sweep (at a test interval) deletes an ended run, awaited on the sweep's own log
 * line, and leaves a waiting run; the server then stops cleanly on SIGTERM.
 * A `--retention` that is no duration is refused before the server starts.
 */
const SWEEP_ENV = { TAPEDECK_TEST_RETENTION_SWEEP_MS: "20" };

async function sweptByServer(server: ServeChild): Promise<void> {
  const admin = server.client(server.adminKey ?? assert.fail("the first start prints the admin key"));
  const toolset = (await admin.toolsets.create({})).id;
  const waiting = await admin.runs.start({ toolset, source: `export default async () => signal("go");` });
  if (waiting.kind !== "started") return assert.fail("refused");
  assert.equal((await admin.runs.get(waiting.run.id, { wait: 1 })).status, "waiting");
  const ended = await admin.runs.start({ toolset, source: `export default async () => "done";` });
  if (ended.kind !== "started") return assert.fail("refused");

  const line = await server.stderrLine((l) => /retention \(1ms\): purged 1 run\(s\)/.test(l));
  assert.doesNotMatch(line, /purged [2-9]/);
  await assert.rejects(admin.runs.get(ended.run.id), (error: Error & { status?: number }) => error.status === 404);
  assert.equal((await admin.runs.get(waiting.run.id)).status, "waiting", "a waiting run is never touched");
  assert.doesNotMatch(server.stderr(), /retention sweep failed/);
}

describe("tapedeck serve --retention (SQLite)", () => {
  it("the background sweep deletes ended runs past the period and leaves waiting runs; the server stops cleanly", async () => {
    const server = await startServeChild({ args: ["--retention", "1ms"], env: SWEEP_ENV });
    try {
      await sweptByServer(server);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });

  it("a --retention that is no duration is refused", async () => {
    await assert.rejects(startServeChild({ args: ["--retention", "a month"] }), /--retention "a month" is not a duration/);
    await assert.rejects(startServeChild({ args: ["--retention", "0s"] }), /--retention must be a duration longer than 0/);
  });
});

describeWithPostgres("tapedeck serve --retention (PostgreSQL)", (url) => {
  void it("the background sweep deletes ended runs on a postgres: store and leaves waiting runs", async () => {
    const schema = freshSchemaName();
    const env = { ...SWEEP_ENV, TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
    const server = await startServeChild({ args: ["--store", schemaUrl(url, schema), "--retention", "1ms"], fresh: true, env });
    try {
      await sweptByServer(server);
    } finally {
      await server.stop();
      server.cleanup();
      await dropSchema(url, schema);
    }
  });
});
