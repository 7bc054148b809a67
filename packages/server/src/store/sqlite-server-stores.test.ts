/**
 * The server's stores on SQLite (in the engine store's database, through its handle): their
 * contracts on a file and in memory, then what only SQLite has: the server's migrations adopt
 * the tables the engine's migrations made before the server owned them, and refuse a history
 * from a newer Tapedeck.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { openStore, type Store } from "@tapedeck/engine";
import { sqliteHandle } from "@tapedeck/engine/sqlite";
import { describeApiKeyStoreContract } from "./api-key-store-contract.js";
import { SERVER_MIGRATIONS_TABLE, serverMigrations } from "./server-migrations.js";
import type { OpenedServerStores } from "./server-store-contract-test.js";
import { openServerStores } from "./server-stores.js";
import { describeWebhookOutboxContract } from "./webhook-outbox-contract.js";

async function onFile(): Promise<OpenedServerStores> {
  const dir = await mkdtemp(join(tmpdir(), "tapedeck-server-store-"));
  const opened: Store[] = [];
  const open = async () => {
    const store = await openStore(dir);
    opened.push(store);
    return { store, server: await openServerStores(store) };
  };
  const first = await open();
  return {
    ...first,
    reopen: open,
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function inMemory(): Promise<OpenedServerStores> {
  const store = await openStore("memory:");
  return { store, server: await openServerStores(store), cleanup: () => store.close() };
}

describeApiKeyStoreContract("SQLite (data folder)", onFile);
describeApiKeyStoreContract("SQLite (memory:)", inMemory);
describeWebhookOutboxContract("SQLite (data folder)", onFile);
describeWebhookOutboxContract("SQLite (memory:)", inMemory);

void describe("the server's SQLite migrations", () => {
  void it("adopt the tables an older data folder has (the engine's migrations made them), keeping their rows, once", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tapedeck-server-store-"));
    try {
      const store = await openStore(dir);
      // The store's own connection: what an older Tapedeck's tables hold, written behind its back.
      const raw = sqliteHandle(store)!.db;
      raw.prepare("INSERT INTO api_keys (id, hash, namespace, labels, created_at) VALUES ('key_old', ?, 'alice', NULL, 5)").run("e".repeat(64));
      const history = () => raw.prepare<[], { version: number }>(`SELECT version FROM ${SERVER_MIGRATIONS_TABLE} ORDER BY version`).all();
      assert.throws(history, /no such table/, "a data folder from before the server owned its tables");
      try {
        assert.deepEqual(await (await openServerStores(store)).apiKeys.list(), [{ id: "key_old", hash: "e".repeat(64), namespace: "alice", createdAt: 5 }]);
        assert.deepEqual(
          history(),
          serverMigrations.map((m) => ({ version: m.version })),
        );
        await openServerStores(store);
        assert.equal(history().length, serverMigrations.length, "applied once");
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("refuse a database whose server tables come from a newer Tapedeck, changing nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tapedeck-server-store-"));
    try {
      const store = await openStore(dir);
      await openServerStores(store);
      sqliteHandle(store)!.db.prepare(`INSERT INTO ${SERVER_MIGRATIONS_TABLE} (version, name, applied_at) VALUES (999, 'future', 0)`).run();
      await store.close();
      const later = await openStore(dir);
      try {
        await assert.rejects(openServerStores(later), /schema version 999 \(in server_schema_migrations\), written by a newer Tapedeck.*Upgrade Tapedeck/);
      } finally {
        await later.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("are refused for a store whose database the server cannot keep its tables in, with what to do", async () => {
    const notSqlite = {} as Store;
    await assert.rejects(
      openServerStores(notSqlite),
      /knows how to only for the SQLite store of a data folder and the PostgreSQL store; open the store with openStore\(<data folder>\) or openStore\("postgres:\/\/…"\)/,
    );
  });
});
