import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Engine } from "./engine.js";
import type { Store } from "./store/store.js";
import { SqliteStore, sqliteHandle } from "./store/sqlite-store.js";
import { PostgresStore, postgresHandle } from "./store/postgres/postgres-store.js";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "./store/contracts/postgres-test-database.js";
import { log, newRun, started } from "./store/contracts/fixtures.js";

/**
 * A purge leaves nothing of what it deleted, in any table: runs with their journal, signals,
 * webhook bindings, run requests, recorded events, host tasks and run-scoped credentials, and a
 * direct session with its spilled blobs and sealed arguments, are purged, then every row of
 * every table of the database (read raw, whatever tables a later migration adds) is searched
 * for their ids: no hit, while a run kept is still found (the search does find what is there).
 */
type Rows = () => Promise<string[]>;

const SESSION = `ses_${"1".repeat(32)}`;

async function purgeLeavesNothing(store: Store, everyRow: Rows): Promise<void> {
  const engine = await Engine.open({ store, wake: false, recordEvents: true });
  try {
    const { id: toolset } = await engine.registerToolset({});
    const start = async (source: string) => {
      const s = await engine.start({ toolset, source, input: { note: "input" } });
      if (s.kind !== "started") return assert.fail("refused");
      await engine.settled(s.runId);
      return s;
    };
    const signalled = await start(`export default async () => { console.log("a line"); return signal("go"); };`);
    const cancelled = await start(`export default async () => signal("never");`);
    const kept = await start(`export default async () => signal("later");`);
    await engine.signal(signalled.runId, "go", { secret: "payload" });
    await engine.signal(signalled.runId, "go", { secret: "one more, never read" });
    await signalled.end;
    await engine.cancel(cancelled.runId, "stop");
    await cancelled.end;

    // What a server and workers leave besides: a webhook binding, a request, a host task, a run's own credential.
    const credential = { name: "TOKEN", kind: "bearer", hosts: ["a.example"], keyId: "k", iv: "aXY", sealed: "c2Vh", createdAt: 1, updatedAt: 1 } as const;
    for (const runId of [signalled.runId, kept.runId]) {
      await store.putWebhook({ tokenHash: `hash_${runId}`, runId, name: "go", createdAt: 1 });
      await store.putRunRequest(runId, { kind: "cancel", reason: "stop" }, 1);
      await store.credentials.put({ ...credential, scopeKey: JSON.stringify(["run", runId]) });
      await store.hostTasks.enqueue({
        id: `task_${runId}`,
        runId,
        seq: 1,
        attempt: 1,
        tool: "shop.charge",
        args: { cents: 1 },
        idempotencyKey: `${runId}/1`,
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        heartbeatTimeoutMs: 30_000,
        audience: { toolsets: [toolset] },
        waiter: "eng_a",
        createdAt: 1,
      });
    }
    // A direct session unused since long ago, with a spilled result and sealed arguments.
    await store.createRun(newRun(SESSION, { createdAt: 1, status: "running" }), [started(0)]);
    await store.append(SESSION, [log(1)], { status: "waiting", updatedAt: 1 });
    await store.directBlobs?.put(SESSION, "blob_result", "a spilled result");
    await store.directBlobs?.put(SESSION, "sealed_args", "sealed arguments");

    const gone = [signalled.runId, cancelled.runId, SESSION];
    const found = async (id: string) => (await everyRow()).filter((row) => row.includes(id)).length;
    for (const id of [...gone, kept.runId]) assert.ok((await found(id)) > 0, `${id} is written before the purge`);

    const purged = await engine.purgeRuns({ before: Date.now() + 1 });
    assert.deepEqual([purged.runs, purged.sessions], [2, 1]);
    for (const id of gone)
      assert.deepEqual(
        (await everyRow()).filter((row) => row.includes(id)),
        [],
        `nothing of ${id} is left`,
      );
    assert.ok((await found(kept.runId)) >= 6, "the waiting run keeps every row");
  } finally {
    await engine.close();
  }
}

describe("a purge leaves nothing (SQLite)", () => {
  it("no row of any table names a purged run or session", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-leftovers-"));
    try {
      const store = SqliteStore.openDataFolder(dir);
      const db = sqliteHandle(store)?.db ?? assert.fail("SQLite");
      await purgeLeavesNothing(store, () => {
        const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
        return Promise.resolve(
          tables.flatMap(({ name }) =>
            db
              .prepare(`SELECT * FROM "${name}"`)
              .all()
              .map((row) => JSON.stringify(row)),
          ),
        );
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres("a purge leaves nothing (PostgreSQL)", (url) => {
  void it("no row of any table of the schema names a purged run or session", async () => {
    const schema = freshSchemaName();
    try {
      const store = await PostgresStore.open(schemaUrl(url, schema));
      const handle = postgresHandle(store) ?? assert.fail("PostgreSQL");
      await purgeLeavesNothing(store, async () => {
        const tables = await handle.read<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [handle.schema]);
        const rows: string[] = [];
        for (const { table_name } of tables)
          rows.push(...(await handle.read<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`)).map((r) => r.row));
        return rows;
      });
    } finally {
      await dropSchema(url, schema);
    }
  });
});
