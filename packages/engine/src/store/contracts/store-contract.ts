/**
 * The behaviour every `Store` must have: each sub-store's contract suite, against one factory.
 * An implementation's test file calls `describeStoreContract` with a factory of fresh stores
 * (as Hono runs one router suite against every router through `runTest({ newRouter })`);
 * SQLite runs it today, PostgreSQL will run it unchanged. The suites test only what the seam
 * files promise, never how an implementation keeps it. Public API for store implementers
 * (`@tapedeck/engine/testing`).
 */
import type { StoreFactory } from "./contract-test.js";
import { describeCredentialStoreContract } from "./credential-store-contract.js";
import { describeHostTaskStoreContract } from "./host-task-store-contract.js";
import { describeLeaseStoreContract } from "./lease-store-contract.js";
import { describeNotifierContract } from "./notifier-contract.js";
import { describePurgeStoreContract } from "./purge-store-contract.js";
import { describeEraseStoreContract } from "./erase-store-contract.js";
import { describeRunStoreContract } from "./run-store-contract.js";
import { describeSignalStoreContract } from "./signal-store-contract.js";
import { describeToolsetStoreContract } from "./toolset-store-contract.js";
import { describeWebhookBindingStoreContract } from "./webhook-binding-store-contract.js";
import { describeScheduleStoreContract } from "./schedule-store-contract.js";

export function describeStoreContract(name: string, open: StoreFactory): void {
  describeRunStoreContract(name, open);
  describeSignalStoreContract(name, open);
  describeLeaseStoreContract(name, open);
  describeToolsetStoreContract(name, open);
  describeWebhookBindingStoreContract(name, open);
  describeScheduleStoreContract(name, open);
  describeCredentialStoreContract(name, open);
  describeHostTaskStoreContract(name, open);
  describeNotifierContract(name, open);
  describePurgeStoreContract(name, open);
  describeEraseStoreContract(name, open);
}
