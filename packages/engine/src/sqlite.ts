/**
 * @tapedeck/engine/sqlite: for parts that keep their own tables in the SQLite store's database
 * (the HTTP server keeps its API keys and webhook outbox there): the store's handle (its
 * connection, group commit and migration rules). Everything exported here is public API.
 */
export { sqliteHandle } from "./store/sqlite-store.js";
export type { SqliteAccess, SqliteDatabase, SqliteHandle } from "./store/sqlite-handle.js";
export type { Migration } from "./store/migrations.js";
