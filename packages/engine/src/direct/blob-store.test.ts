import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { MemoryBlobStore } from "../store/blob-store.js";
import { describeBlobStoreContract } from "./test-support/blob-store-contract.js";
import { migrate } from "../store/migrations.js";
import { SqliteBlobStore } from "../store/sqlite-blob-store.js";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "../store/contracts/postgres-test-database.js";
import { PostgresStore } from "../store/postgres/postgres-store.js";

describeBlobStoreContract("memory", () => Promise.resolve({ store: new MemoryBlobStore(), close: () => Promise.resolve() }));

describeBlobStoreContract("sqlite", () => {
  const folder = mkdtempSync(join(tmpdir(), "tapedeck-blobs-"));
  const databases: Database.Database[] = [];
  const openDb = () => {
    const db = new Database(join(folder, "blobs.db"));
    db.pragma("journal_mode = WAL");
    migrate(db);
    databases.push(db);
    return new SqliteBlobStore(db);
  };
  return Promise.resolve({
    store: openDb(),
    reopen: () => Promise.resolve(openDb()),
    close: () => {
      for (const db of databases) db.close();
      rmSync(folder, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
});

// The PostgreSQL store's blobs: each test in a schema of its own; `reopen` is another store (another node) on it.
describeWithPostgres("PgBlobStore", (url) => {
  describeBlobStoreContract("postgres", async () => {
    const schema = freshSchemaName();
    const stores: PostgresStore[] = [];
    const open = async () => {
      const store = await PostgresStore.open(schemaUrl(url, schema));
      stores.push(store);
      return store.directBlobs;
    };
    return {
      store: await open(),
      reopen: open,
      close: async () => {
        await Promise.all(stores.map((store) => store.close()));
        await dropSchema(url, schema);
      },
    };
  });
});
