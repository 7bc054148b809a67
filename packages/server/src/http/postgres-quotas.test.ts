import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { failure } from "./test-support/failure.js";
import { startServeChild } from "./test-support/serve-child.js";

/**
 * Quotas on PostgreSQL: two `tapedeck serve` nodes on one store share a namespace's window of
 * runs per minute (the store's rate-limit log), so starts spread over both nodes are refused
 * (429, `Retry-After`) once the namespace's quota is used up, whichever node they reach; and one
 * window of tool calls per minute (`callsPerMinute`). Needs TAPEDECK_TEST_POSTGRES_URL.
 */
describeWithPostgres("quotas on PostgreSQL", (url) => {
  void describe("two nodes on one store", () => {
    void it("share a namespace's runs per minute (the third start, on either node, is 429 with Retry-After) and its calls per minute", async () => {
      const schema = freshSchemaName();
      const store = schemaUrl(url, schema);
      const env = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
      const args = ["--store", store, "--namespace-quotas", "runsPerMinute=2,callsPerMinute=4"];
      const hostModule = `export const c = { count: async () => 1 };`;
      const a = await startServeChild({ args, fresh: true, env, hostModule });
      const b = await startServeChild({ args, fresh: false, env, hostModule });
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

        // Calls per minute: one window for the end user's calls on both nodes.
        const counting = (await onA.toolsets.create({ hostTools: { c: { count: { description: "Counts.", inputSchema: { type: "object" } } } } })).id;
        const calls = `import { c } from "tapedeck:tools";
export default async () => { const seen = []; for (let i = 0; i < 3; i++) { try { seen.push(await c.count({})); } catch (e) { seen.push((e as { code: string }).code); } } return seen; };`;
        const outputs = [];
        for (const node of [a, b]) {
          const dora = node.client(key, "dora");
          const started = await dora.runs.start({ toolset: counting, source: calls });
          outputs.push((await dora.runs.get(started.kind === "started" ? started.run.id : assert.fail("refused"), { wait: 60 })).output);
        }
        assert.deepEqual(outputs, [
          [1, 1, 1],
          [1, "rate_limited", "rate_limited"],
        ]);
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
