import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { failure } from "./test-support/failure.js";
import { startServeChild } from "./test-support/serve-child.js";

/**
 * Quotas on PostgreSQL: two `tapedeck serve` nodes on one store share a namespace's window of
 * runs per minute (the store's rate-limit log), so starts spread over both nodes are refused
 * (429, `Retry-After`) once the namespace's quota is used up, whichever node they reach. Needs
 * TAPEDECK_TEST_POSTGRES_URL.
 */
describeWithPostgres("quotas on PostgreSQL", (url) => {
  void describe("two nodes on one store", () => {
    void it("share a namespace's runs per minute: the third start, on either node, is 429 with Retry-After", async () => {
      const schema = freshSchemaName();
      const store = schemaUrl(url, schema);
      const env = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
      const args = ["--store", store, "--namespace-quotas", "runsPerMinute=2"];
      const a = await startServeChild({ args, fresh: true, env });
      const b = await startServeChild({ args, fresh: false, env });
      try {
        const key = a.adminKey ?? assert.fail("the store's first start prints the admin key");
        const [onA, onB] = [a.client(key, "alice"), b.client(key, "alice")];
        const toolset = (await onA.toolsets.create({})).id;
        const source = `export default async () => 1;`;
        assert.equal((await onA.runs.start({ toolset, source })).kind, "started");
        assert.equal((await onB.runs.start({ toolset, source })).kind, "started");
        for (const node of [onA, onB]) {
          const refused = await failure(node.runs.start({ toolset, source }));
          assert.deepEqual([refused.status, refused.code], [429, "quota_exceeded"]);
          assert.ok((refused.retryAfterSeconds ?? 0) >= 1, String(refused.retryAfterSeconds));
        }
        // Another end user has a window of its own.
        assert.equal((await b.client(key, "bob").runs.start({ toolset, source })).kind, "started");
      } finally {
        await a.stop();
        await b.stop();
        a.cleanup();
        b.cleanup();
        await dropSchema(url, schema);
      }
    });
  });
});
