// The schedules sub-store's contract alone, on SQLite (a file, opened twice: two processes'
// claims) and PostgreSQL (when TAPEDECK_TEST_POSTGRES_URL is set), so it runs by its own filter
// (`node scripts/run-tests.mjs schedule`); the full store suites run it too.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeScheduleStoreContract } from "./contracts/schedule-store-contract.js";
import { describeWithPostgres, postgresStoreFactory } from "./contracts/postgres-test-database.js";
import { SqliteStore } from "./sqlite-store.js";

describeScheduleStoreContract("SqliteStore (file)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tapedeck-schedules-"));
  const path = join(dir, "tapedeck.db");
  const opened: SqliteStore[] = [];
  const open = (): SqliteStore => {
    const store = SqliteStore.open({ path, durability: "full" });
    opened.push(store);
    return store;
  };
  const opening = (): Promise<SqliteStore> => Promise.resolve(open());
  const cleanup = async (): Promise<void> => {
    await Promise.all(opened.map((store) => store.close()));
    await rm(dir, { recursive: true, force: true });
  };
  return { store: open(), reopen: opening, peer: opening, cleanup };
});

describeWithPostgres("PostgresStore schedules", (url) => {
  describeScheduleStoreContract("PostgresStore", postgresStoreFactory(url));
});
