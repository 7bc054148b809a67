/**
 * @tapedeck/engine/postgres: for parts that keep their own tables in the PostgreSQL store's
 * database (the HTTP server keeps its API keys and webhook outbox there): the store's handle
 * (writes in its group commit, reads on its pool, its migration rules). Everything exported
 * here is public API. Open the store itself with `openStore("postgres://…")`.
 */
export { postgresHandle } from "./store/postgres/postgres-store.js";
export type { PostgresHandle } from "./store/postgres/postgres-store.js";
export type { PgTransaction } from "./store/postgres/pg-access.js";
export type { Migration } from "./store/migrations.js";
