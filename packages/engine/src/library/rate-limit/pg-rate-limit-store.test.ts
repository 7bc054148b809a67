import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "../../store/contracts/postgres-test-database.js";
import { PostgresStore } from "../../store/postgres/postgres-store.js";
import { describeRateLimitStoreContract } from "./test-support/rate-limit-store-contract.js";

/**
 * The rate-limit contract on PostgreSQL (`PgRateLimitStore`, the PostgreSQL store's
 * `rateLimits`): the same suite SQLite runs. Needs TAPEDECK_TEST_POSTGRES_URL
 * (`bash scripts/pg-cluster.sh run node scripts/run-tests.mjs pg-rate-limit`).
 */
describeWithPostgres("PgRateLimitStore", (url) => {
  describeRateLimitStoreContract(
    "PostgreSQL",
    async () => {
      const schema = freshSchemaName();
      const location = schemaUrl(url, schema);
      let store = await PostgresStore.open(location, { durability: "off" });
      return {
        store: store.rateLimits,
        reopen: async () => {
          await store.close();
          store = await PostgresStore.open(location, { durability: "off" });
          return store.rateLimits;
        },
        close: async () => {
          await store.close();
          await dropSchema(url, schema);
        },
      };
    },
    { propertyRuns: 20 },
  );
});
