import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { MemoryBlobStore } from "../store/blob-store.js";
import { describeBlobStoreContract } from "./test-support/blob-store-contract.js";
import { migrate } from "../store/migrations.js";
import { SqliteBlobStore } from "../store/sqlite-blob-store.js";

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
