/**
 * The server's stores on PostgreSQL (in the engine store's database, through its handle): the
 * same contracts SQLite passes, each test in a fresh schema. Needs TAPEDECK_TEST_POSTGRES_URL.
 */
import { openStore, type Store } from "@tapedeck/engine";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { describeApiKeyStoreContract } from "./api-key-store-contract.js";
import type { OpenedServerStores } from "./server-store-contract-test.js";
import { openServerStores } from "./server-stores.js";
import { describeWebhookOutboxContract } from "./webhook-outbox-contract.js";

describeWithPostgres("the server's stores on PostgreSQL", (url) => {
  const fresh = async (): Promise<OpenedServerStores> => {
    const schema = freshSchemaName();
    const opened: Store[] = [];
    const open = async () => {
      const store = await openStore(schemaUrl(url, schema));
      opened.push(store);
      return { store, server: await openServerStores(store) };
    };
    return {
      ...(await open()),
      reopen: open,
      cleanup: async () => {
        await Promise.all(opened.map((store) => store.close()));
        await dropSchema(url, schema);
      },
    };
  };
  describeApiKeyStoreContract("PostgreSQL", fresh);
  describeWebhookOutboxContract("PostgreSQL", fresh);
});
