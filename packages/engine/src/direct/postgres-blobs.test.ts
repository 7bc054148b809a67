import assert from "node:assert/strict";
import { after, it } from "node:test";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "../store/contracts/postgres-test-database.js";
import { openStore } from "../store/open-store.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";

after(() => testSandboxes().close());

/**
 * A direct session's spilled results on a PostgreSQL store are in its database (`PgBlobStore`),
 * not in the engine's memory: an engine opened later on the same URL (a restart, another node)
 * reads them back through `fetch_blob`, in the session that made them only.
 */
describeWithPostgres("direct tool blobs on PostgreSQL", (url) => {
  void it("spills to the database: the next engine on the URL reads the blob back exactly, and another session finds nothing", async () => {
    const schema = freshSchemaName();
    const location = schemaUrl(url, schema);
    const lines = Array.from({ length: 300 }, (_, i) => `row ${i} \u0000 ${"y".repeat(20)}`);
    const tools = new ToolHarness({ "r.list": () => lines.join("\n") });
    const first = await testEngine({ store: await openStore(location), hostTools: tools.module() });
    try {
      const { id } = await first.engine.registerToolset(harnessToolset(["r.list"]));
      const options = { toolset: id, approval: { allow: ["*"] }, results: { maxTokens: 100 } } as const;
      const bound = await first.engine.direct.bind({ session: "pg" }, options);
      await first.engine.direct.bind({ session: "other" }, options);
      const answer = await first.engine.direct.call({ session: "pg" }, { binding: bound.binding, api: "generic", toolCallId: "c1", name: "r_list", input: {} });
      const preview = answer.status === "done" ? String((answer.result as { text: string }).text) : "";
      const handle = /(blob_[0-9a-f]{40})/.exec(preview)?.[1];
      assert.ok(handle, preview);
      await first.engine.close();

      const second = await first.reopen({ store: await openStore(location), hostTools: tools.module() });
      try {
        let text = "";
        for (let offset: number | undefined = 0; offset !== undefined;) {
          const page = await second.direct.blob({ session: "pg" }, handle, offset);
          text += page.text;
          offset = page.nextOffset;
        }
        assert.equal(text, lines.join("\n"));
        await assert.rejects(second.direct.blob({ session: "other" }, handle, 0), { code: "not_found" });
      } finally {
        await second.close();
      }
    } finally {
      await first.cleanup();
      await dropSchema(url, schema);
    }
  });
});
