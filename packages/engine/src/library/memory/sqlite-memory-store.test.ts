import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import Database from "better-sqlite3";
import { SqliteMemoryStore } from "./sqlite-memory-store.js";
import { describeMemoryStoreContract } from "./test-support/memory-store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "tapedeck-memory-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

describeMemoryStoreContract("SQLite", () => {
  const file = join(dir, `memory-${n++}.db`);
  let db = new Database(file);
  return Promise.resolve({
    store: new SqliteMemoryStore(db),
    reopen: () => {
      db.close();
      db = new Database(file);
      return Promise.resolve(new SqliteMemoryStore(db));
    },
    close: () => Promise.resolve(void db.close()),
  });
});
