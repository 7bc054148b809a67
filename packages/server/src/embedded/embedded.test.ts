import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Tapedeck, TapedeckError, type ToolContext } from "@tapedeck/sdk";

/**
 * `Tapedeck.embedded`: the SDK's client over an engine in this process, loaded by the SDK from
 * @tapedeck/server without HTTP. The same calls as against a server: toolsets, runs, signals,
 * errors; host tools in process, and the others through a worker of the same client.
 */
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TOOLSET = {
  hostTools: {
    shop: { price: { description: "A price.", inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } } },
    mail: { send: { description: "Sends.", inputSchema: { type: "object" } } },
  },
};

describe("embedded client", () => {
  it("round trip without a server: a run with in-process host tools and a worker's tool, a signal, errors as over HTTP; the data stays for the next open", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tapedeck-embedded-"));
    dirs.push(dataDir);
    const td = await Tapedeck.embedded({
      dataDir,
      durability: "off",
      hostTools: { shop: { price: ({ sku }: { sku: string }, ctx: ToolContext) => ({ sku, cents: sku.length * 100, tool: ctx.tool }) } },
    });
    let runId: string;
    const worker = td.worker({ tools: { mail: { send: (args: { to: string }) => `sent to ${args.to}` } } }).start();
    try {
      const { id: toolset } = await td.toolsets.create(TOOLSET);
      const started = await td.namespace("alice").runs.start({
        toolset,
        source: `import { shop, mail } from "tapedeck:tools";\nexport default async () => { const p = await shop.price({ sku: "abc" }); const go = await signal<string>("go"); return [p, await mail.send({ to: go })]; };`,
      });
      assert.equal(started.kind, "started");
      runId = started.kind === "started" ? started.run.id : "";
      const parked = await td.runs.get(runId, { wait: 30 });
      assert.deepEqual([parked.status, parked.namespace], ["waiting", "alice"]);
      await td.runs.signal(runId, { name: "go", payload: "ann" });
      const done = await td.runs.get(runId, { wait: 30 });
      assert.deepEqual([done.status, done.output], ["completed", [{ sku: "abc", cents: 300, tool: "shop.price" }, "sent to ann"]]);
      assert.deepEqual(
        (await td.namespace("bob").runs.list()).map((r) => r.id),
        [],
      );
      const missing = await td.runs.get("run_missing").catch((error: unknown) => error);
      assert.ok(TapedeckError.is(missing) && missing.status === 404 && missing.code === "not_found");
      assert.equal((await td.runs.start({ toolset, source: "export default () => shop.nope();" })).kind, "refused");
    } finally {
      await worker.stop();
      await td.close();
    }
    const again = await Tapedeck.embedded({ dataDir, durability: "off" });
    try {
      assert.equal((await again.runs.get(runId)).status, "completed");
    } finally {
      await again.close();
    }
  });
});
