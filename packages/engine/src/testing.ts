/**
 * @tapedeck/engine/testing: the contract suites of the store's seams, for whoever implements a
 * store (PostgreSQL, or one of your own). Everything exported here is public API. Each suite is
 * one function taking a name and a factory of fresh, empty stores, and registers `node:test`
 * tests; run them from your implementation's test file:
 *
 *   describeStoreContract("MyStore", async () => {
 *     const store = await MyStore.open(freshDatabase());
 *     return { store, cleanup: () => store.close() };
 *   });
 *
 * `describeStoreContract` runs every suite; each sub-store's suite can run alone. For tests on
 * PostgreSQL: `describeWithPostgres` (the database of TAPEDECK_TEST_POSTGRES_URL; skipped without
 * it, failing in CI) and `postgresStoreFactory` (a fresh schema per test).
 */
export { contractTest, eventually } from "./store/contracts/contract-test.js";
export type { ContractTest, OpenedStore, StoreFactory } from "./store/contracts/contract-test.js";
export { describeStoreContract } from "./store/contracts/store-contract.js";
export { describeRunStoreContract } from "./store/contracts/run-store-contract.js";
export { describeSignalStoreContract } from "./store/contracts/signal-store-contract.js";
export { describeLeaseStoreContract } from "./store/contracts/lease-store-contract.js";
export { describeToolsetStoreContract } from "./store/contracts/toolset-store-contract.js";
export { describeWebhookBindingStoreContract } from "./store/contracts/webhook-binding-store-contract.js";
export { describeScheduleStoreContract } from "./store/contracts/schedule-store-contract.js";
export { describeCredentialStoreContract } from "./store/contracts/credential-store-contract.js";
export { describePurgeStoreContract } from "./store/contracts/purge-store-contract.js";
export { describeEraseStoreContract } from "./store/contracts/erase-store-contract.js";
export { describeHostTaskStoreContract } from "./store/contracts/host-task-store-contract.js";
export { describeNotifierContract } from "./store/contracts/notifier-contract.js";
export {
  describeWithPostgres,
  dropSchema,
  freshSchemaName,
  postgresStoreFactory,
  schemaUrl,
  testPostgresUrl,
} from "./store/contracts/postgres-test-database.js";
