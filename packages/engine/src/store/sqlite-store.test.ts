/**
 * SqliteStore: the Store contract on a file and in memory, then what only SQLite has:
 * migrations, WAL, and surviving a SIGKILL in the middle of writing.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { CRASH_RUNS, crashEntry } from "./crash-child.js";
import { migrate, migrations } from "./migrations.js";
import { SqliteStore } from "./sqlite-store.js";
import { describeStoreContract } from "./contracts/store-contract.js";

/** A temporary directory holding one database file; `dispose` closes the stores and deletes it. */
async function tempDatabase(): Promise<{ path: string; open: () => SqliteStore; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "tapedeck-store-"));
  const path = join(dir, "tapedeck.db");
  const opened: SqliteStore[] = [];
  return {
    path,
    open: () => {
      const store = SqliteStore.open({ path, durability: "full" });
      opened.push(store);
      return store;
    },
    dispose: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describeStoreContract("SqliteStore (file, durability full)", async () => {
  const db = await tempDatabase();
  const opening = () => Promise.resolve(db.open());
  return { store: db.open(), reopen: opening, peer: opening, cleanup: db.dispose };
});

// Its notifier never polls: only a publish reaches a listener, so the contract's notification
// tests fail here for a write that forgets to tell (the file's store polls, for its peers).
describeStoreContract("SqliteStore (:memory:, notifier without polling)", () => {
  const store = SqliteStore.open({ path: ":memory:", pollMs: 3_600_000 });
  return Promise.resolve({ store, cleanup: () => store.close() });
});

void describe("SqliteStore migrations", () => {
  void it("a fresh database gets every migration; an up-to-date one gets none", async () => {
    const db = await tempDatabase();
    try {
      const raw = new Database(db.path);
      assert.deepEqual(
        migrate(raw),
        migrations.map((m) => m.version),
      );
      assert.deepEqual(migrate(raw), []);
      raw.close();
      await db.open().close();
      const check = new Database(db.path, { readonly: true });
      const rows = check.prepare("SELECT version FROM schema_migrations ORDER BY version").all();
      check.close();
      assert.deepEqual(
        rows,
        migrations.map((m) => ({ version: m.version })),
      );
    } finally {
      await db.dispose();
    }
  });

  void it("migration 8 keeps the operator's older webhook endpoints reaching any address, and limits tenants'", async () => {
    const db = await tempDatabase();
    try {
      const raw = new Database(db.path);
      raw.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
      for (const migration of migrations.filter((m) => m.version <= 7).sort((a, b) => a.version - b.version)) {
        raw.exec(migration.sql);
        raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(migration.version, migration.name);
      }
      const insert = raw.prepare(
        "INSERT INTO webhook_endpoints (id, url, events, namespace, labels, secret, description, created_at) VALUES (?, ?, NULL, ?, ?, 'sealed', NULL, 1)",
      );
      insert.run("wh_operator", "http://127.0.0.1:9/hook", null, null);
      insert.run("wh_tenant", "https://hooks.example.com/a", "alice", null);
      insert.run("wh_labelled", "https://hooks.example.com/b", null, '{"team":"red"}');
      assert.ok(migrate(raw).includes(8));
      const endpoints = raw.prepare<[], { id: string; any_address: number }>("SELECT id, any_address FROM webhook_endpoints ORDER BY rowid").all();
      raw.close();
      assert.deepEqual(
        endpoints.map((e) => [e.id, e.any_address === 1]),
        [
          ["wh_operator", true],
          ["wh_tenant", false],
          ["wh_labelled", false],
        ],
      );
    } finally {
      await db.dispose();
    }
  });

  void it("refuses a database from a newer Tapedeck, changing nothing", async () => {
    const db = await tempDatabase();
    try {
      await db.open().close();
      const raw = new Database(db.path);
      raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)").run();
      raw.close();
      assert.throws(() => db.open(), /schema version 999, written by a newer Tapedeck.*Upgrade Tapedeck/);
      const check = new Database(db.path, { readonly: true });
      assert.equal(check.prepare("SELECT count(*) AS n FROM schema_migrations").pluck().get(), migrations.length + 1);
      check.close();
    } finally {
      await db.dispose();
    }
  });
});

void describe("SqliteStore on disk", () => {
  void it("uses WAL mode", async () => {
    const db = await tempDatabase();
    try {
      const store = db.open();
      const raw = new Database(db.path, { readonly: true });
      assert.equal(raw.pragma("journal_mode", { simple: true }), "wal");
      raw.close();
      await store.close();
    } finally {
      await db.dispose();
    }
  });

  void it("a list for people shows a run whose row cannot be read as damaged, with its id, and the others as usual", async () => {
    const db = await tempDatabase();
    try {
      const store = db.open();
      const toolset = { id: "ts_damaged", tools: [] };
      await store.putToolset(toolset);
      for (const id of ["run_a", "run_b", "run_c"]) {
        await store.createRun(
          {
            id,
            toolsetId: toolset.id,
            source: "export default 1;",
            js: "export default 1;",
            sourceMap: "{}",
            input: { n: 1 },
            status: "waiting",
            createdAt: 1_700_000_000_000,
            labels: { team: "red" },
          },
          [],
        );
      }
      // A column that is not what the store wrote (a damaged or hand-edited database).
      const raw = new Database(db.path);
      raw.prepare("UPDATE runs SET waits = '[{\"kind\":\"sleep\",' WHERE id = 'run_b'").run();
      raw.close();
      await assert.rejects(store.listRuns(), SyntaxError, "without includeDamaged, an unreadable run is an error");
      const listed = await store.listRuns({ includeDamaged: true });
      assert.deepEqual(
        listed.map((run) => [run.id, run.damaged === undefined]),
        [
          ["run_c", true],
          ["run_b", false],
          ["run_a", true],
        ],
      );
      const damaged = listed.find((run) => run.id === "run_b")!;
      assert.match(damaged.damaged!, /^its row cannot be read \(.*JSON/);
      assert.deepEqual([damaged.status, damaged.toolsetId, damaged.createdAt], ["waiting", toolset.id, 1_700_000_000_000]);
      assert.deepEqual(listed.find((run) => run.id === "run_a")?.input, { n: 1 });
      await store.close();
    } finally {
      await db.dispose();
    }
  });

  void it("keeps every acknowledged append when the process is SIGKILLed mid-write", async () => {
    const db = await tempDatabase();
    try {
      const child = spawn(process.execPath, [fileURLToPath(new URL("./crash-child.js", import.meta.url)), db.path], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const acknowledged = new Map<string, number>();
      let lines = 0;
      createInterface({ input: child.stdout }).on("line", (line) => {
        const [runId = "", index = ""] = line.split(" ");
        acknowledged.set(runId, Math.max(acknowledged.get(runId) ?? 0, Number(index)));
        // Kill at the first acknowledgement past 400: appends are in flight at that moment.
        if (++lines === 400) child.kill("SIGKILL");
      });
      // "close" comes after the exit and after stdout's last line has been read.
      const [, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
      assert.equal(signal, "SIGKILL", `the child did not run to the kill: ${stderr}`);
      assert.equal(acknowledged.size, CRASH_RUNS);

      const store = db.open();
      for (const [runId, last] of acknowledged) {
        const journal = await store.readJournal(runId);
        assert.ok(journal.length > last, `${runId}: entry ${last} was acknowledged but the journal has ${journal.length}`);
        assert.deepEqual(
          journal,
          Array.from({ length: journal.length }, (_, i) => crashEntry(i)),
        );
        assert.equal((await store.getRun(runId))?.journalLength, journal.length);
      }
    } finally {
      await db.dispose();
    }
  });
});
