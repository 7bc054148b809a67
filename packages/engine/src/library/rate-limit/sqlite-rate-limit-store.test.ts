import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { SqliteRateLimitStore } from "../../store/sqlite-rate-limit-store.js";
import { describeRateLimitStoreContract } from "./test-support/rate-limit-store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "tapedeck-rate-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function openDb(file: string): Database.Database {
  const db = new Database(file);
  db.pragma("busy_timeout = 10000");
  db.pragma("journal_mode = WAL");
  return db;
}

describeRateLimitStoreContract("SQLite", () => {
  const file = join(dir, `rate-${n++}.db`);
  let db = openDb(file);
  return Promise.resolve({
    store: new SqliteRateLimitStore(db),
    reopen: () => {
      db.close();
      db = openDb(file);
      return Promise.resolve(new SqliteRateLimitStore(db));
    },
    close: () => Promise.resolve(void db.close()),
  });
});

void describe("SqliteRateLimitStore across processes", () => {
  it("four processes taking 20 places each from a limit of 25 on one database get exactly 25", async () => {
    const file = join(dir, "shared.db");
    openDb(file).close();
    const child = fileURLToPath(new URL("./test-support/take-child.js", import.meta.url));
    const run = promisify(execFile);
    const outputs = await Promise.all(Array.from({ length: 4 }, () => run(process.execPath, [child, file, "shared-key", "20", "1000000"])));
    const allowed = outputs.map((output) => Number(output.stdout));
    assert.equal(
      allowed.reduce((a, b) => a + b, 0),
      25,
      `allowed per process: ${allowed.join(", ")}`,
    );
  });
});
