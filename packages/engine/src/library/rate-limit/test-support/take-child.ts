// A process that takes rate-limit places from a shared SQLite database, for the test that
// several processes on one data folder share limits. Usage: node take-child.js <db> <key> <count> <now>
// Prints how many of its `count` takes were allowed.
import Database from "better-sqlite3";
import { SqliteRateLimitStore } from "../../../store/sqlite-rate-limit-store.js";

const [file, key, count, now] = process.argv.slice(2);
const db = new Database(file);
db.pragma("busy_timeout = 10000");
const store = new SqliteRateLimitStore(db);
let allowed = 0;
for (let i = 0; i < Number(count); i++) if ((await store.take(key!, [{ ms: 60_000, limit: 25 }], Number(now))).ok) allowed++;
db.close();
process.stdout.write(String(allowed));
