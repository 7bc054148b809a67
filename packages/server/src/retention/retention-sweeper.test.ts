import assert from "node:assert/strict";
import { EventEmitter, once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Engine, openStore, type Store } from "@tapedeck/engine";
import { postgresHandle } from "@tapedeck/engine/postgres";
import { sqliteHandle } from "@tapedeck/engine/sqlite";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { openServerStores } from "../store/server-stores.js";
import { RetentionSweeper } from "./retention-sweeper.js";

/**
 * The retention sweep against a real engine on SQLite and on PostgreSQL, its timer at a short
 * interval and every step awaited on the sweep's own lines (no sleeps): a sweep whose store
 * fails (a table it deletes from renamed away) is logged, deletes nothing, and the next interval
 * tries again and purges the ended run once the table is back; a waiting run is never touched
 * and still ends; `stop` waits for the turn in flight and nothing is swept after it.
 */
type Break = (away: boolean) => Promise<void>;

async function sweepThroughFault(store: Store, breakTable: Break): Promise<void> {
  const engine = await Engine.open({ store, wake: false });
  const { webhookOutbox } = await openServerStores(store);
  const lines = new EventEmitter();
  const seen: string[] = [];
  const say = (kind: "info" | "error") => (line: string) => {
    seen.push(`${kind}: ${line}`);
    lines.emit(kind, line);
  };
  // The sweep's timer never holds a process open (a server's listener does): this test holds it
  // open instead, else the loop may empty while a step waits for the sweep's next line.
  const listener = setInterval(() => {}, 60_000);
  const sweeper = new RetentionSweeper({ engine: () => engine, outbox: webhookOutbox, retentionMs: 1, intervalMs: 5, info: say("info"), error: say("error") });
  try {
    const { id: toolset } = await engine.registerToolset({});
    const start = async (source: string) => {
      const started = await engine.start({ toolset, source });
      if (started.kind !== "started") return assert.fail("refused");
      await engine.settled(started.runId);
      return started;
    };
    const ended = await start(`export default async () => "done";`);
    const waiting = await start(`export default async () => signal("go");`);
    assert.equal((await engine.getRun(ended.runId)).status, "completed");
    assert.equal((await engine.getRun(waiting.runId)).status, "waiting");

    await breakTable(true);
    const failed = once(lines, "error");
    sweeper.start();
    const [fault] = (await failed) as [string];
    assert.match(fault, /^retention sweep failed \(tried again in 5ms\): .*direct_blobs/);
    assert.equal((await engine.getRun(ended.runId)).status, "completed", "a failed sweep deleted nothing");

    const purged = once(lines, "info");
    await breakTable(false);
    const [done] = (await purged) as [string];
    assert.match(done, /^retention \(1ms\): purged 1 run\(s\), 0 session\(s\) and 0 webhook deliveries ended before /);
    await assert.rejects(engine.getRun(ended.runId), /not_found|No run/);
    assert.equal((await engine.getRun(waiting.runId)).status, "waiting", "a waiting run is never touched");

    await engine.signal(waiting.runId, "go", "now");
    assert.deepEqual(await waiting.end, { status: "completed", output: "now" });

    await sweeper.stop();
    const after = seen.length;
    await engine.close();
    assert.equal(seen.length, after, "nothing is swept once stopped");
  } finally {
    await sweeper.stop();
    await engine.close();
    clearInterval(listener);
  }
}

describe("RetentionSweeper (SQLite)", () => {
  it("a failed sweep is logged and tried again at the next interval; ended runs go, waiting runs stay", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-retention-"));
    try {
      const store = await openStore(dir);
      const db = sqliteHandle(store)?.db ?? assert.fail("a data folder's store is SQLite");
      await sweepThroughFault(store, async (away) => {
        db.exec(away ? "ALTER TABLE direct_blobs RENAME TO direct_blobs_away" : "ALTER TABLE direct_blobs_away RENAME TO direct_blobs");
        return Promise.resolve();
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres("RetentionSweeper (PostgreSQL)", (url) => {
  void it("a failed sweep is logged and tried again at the next interval; ended runs go, waiting runs stay", async () => {
    const schema = freshSchemaName();
    try {
      const store = await openStore(schemaUrl(url, schema));
      const handle = postgresHandle(store) ?? assert.fail("a postgres: store");
      await sweepThroughFault(store, async (away) => {
        await handle.read(away ? "ALTER TABLE direct_blobs RENAME TO direct_blobs_away" : "ALTER TABLE direct_blobs_away RENAME TO direct_blobs");
      });
    } finally {
      await dropSchema(url, schema);
    }
  });
});
