/**
 * Tests that need PostgreSQL: where its URL comes from, what happens without it, and a fresh
 * schema per test.
 *
 * Invariants:
 * - The URL is `TAPEDECK_TEST_POSTGRES_URL` (`scripts/pg-cluster.sh` starts a throwaway cluster
 *   and sets it). Without it the tests are skipped locally, saying how to run them, and FAIL in
 *   CI (`CI=true`): a CI that lost its database must not pass by running nothing.
 * - Each store a factory makes lives in a schema of its own (random name), dropped at cleanup:
 *   tests running at once never see each other's rows.
 */
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import pg from "pg";
import type { OpenedStore, StoreFactory } from "./contract-test.js";
import { PostgresStore, type PostgresStoreOptions } from "../postgres/postgres-store.js";

export const POSTGRES_URL_VARIABLE = "TAPEDECK_TEST_POSTGRES_URL";

const HOW_TO_RUN = `set ${POSTGRES_URL_VARIABLE} to a PostgreSQL URL the tests may create schemas in, or run them in a throwaway cluster: scripts/pg-cluster.sh run node scripts/run-tests.mjs postgres`;

/** The test database's URL, if one is given. */
export function testPostgresUrl(): string | undefined {
  const url = process.env[POSTGRES_URL_VARIABLE];
  return url === undefined || url === "" ? undefined : url;
}

/**
 * `describe(name, …)` for tests that need PostgreSQL: `body` gets the URL. Without one: a
 * skipped test saying how to run them, or in CI a failing one.
 */
export function describeWithPostgres(name: string, body: (url: string) => void): void {
  const url = testPostgresUrl();
  void describe(name, () => {
    if (url !== undefined) return body(url);
    if (process.env.CI === "true") {
      void it(`needs PostgreSQL`, () => {
        throw new Error(`${name} needs PostgreSQL and CI=true, but ${POSTGRES_URL_VARIABLE} is not set: ${HOW_TO_RUN}.`);
      });
    } else {
      void it(`needs PostgreSQL`, { skip: `no PostgreSQL: ${HOW_TO_RUN}` }, () => {});
    }
  });
}

/** The URL of schema `schema` in the test database. */
export function schemaUrl(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("schema", schema);
  return parsed.toString();
}

/** A fresh schema's name: unique across test processes. */
export function freshSchemaName(): string {
  return `t_${randomBytes(8).toString("hex")}`;
}

/** Drops a schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A factory of fresh PostgreSQL stores for the contract suites: each in a new schema, with `reopen` and `peer` on the same schema. */
export function postgresStoreFactory(url: string, options: PostgresStoreOptions = {}): StoreFactory {
  return async (): Promise<OpenedStore> => {
    const schema = freshSchemaName();
    const location = schemaUrl(url, schema);
    const opened: PostgresStore[] = [];
    const open = async (): Promise<PostgresStore> => {
      const store = await PostgresStore.open(location, options);
      opened.push(store);
      return store;
    };
    return {
      store: await open(),
      reopen: open,
      peer: open,
      cleanup: async () => {
        await Promise.all(opened.map((store) => store.close()));
        await dropSchema(url, schema);
      },
    };
  };
}
