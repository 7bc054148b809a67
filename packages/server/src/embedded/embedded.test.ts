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

  it("serves direct tools in process: a call journaled with its key, waiting for an approval that a second open of the data folder still has", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tapedeck-embedded-direct-"));
    dirs.push(dataDir);
    const keys: string[] = [];
    const hostTools = { mail: { send: (args: { to: string }, ctx: ToolContext) => (keys.push(ctx.idempotencyKey), `sent to ${args.to}`) } };
    const options = { toolset: "", session: "conv", tools: ["mail.send"], approval: { ask: [{ tool: "mail.send", summary: "Mail {/to}" }] } };
    const td = await Tapedeck.embedded({ dataDir, durability: "off", hostTools });
    let sessionId: string;
    try {
      const { id: toolset } = await td.toolsets.create(TOOLSET);
      options.toolset = toolset;
      const tools = await td.namespace("alice").directTools(options);
      sessionId = tools.sessionId;
      const step = await tools.call("generic", "mail_send", { to: "ann" }, "call-1");
      assert.equal(step.status === "pending" ? step.approval.summary : step.status, "Mail ann");
    } finally {
      await td.close();
    }
    const again = await Tapedeck.embedded({ dataDir, durability: "off", hostTools });
    try {
      const tools = await again.namespace("alice").directTools(options);
      assert.deepEqual(
        (await tools.pending()).map((a) => a.summary),
        ["Mail ann"],
      );
      await tools.approve(1);
      const result = await tools.handle("mail_send", { to: "ann" }, { toolCallId: "call-1" });
      assert.deepEqual([result.text, result.isError], ["sent to ann", false]);
      assert.deepEqual(keys, [`${sessionId}/1`]);
    } finally {
      await again.close();
    }
  });

  it("refuses the live streams at once, saying why and what to use instead: an embedded client cannot hold one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tapedeck-embedded-"));
    dirs.push(dataDir);
    const td = await Tapedeck.embedded({ dataDir, durability: "off" });
    try {
      const { id: toolset } = await td.toolsets.create({});
      const started = await td.runs.start({ toolset, source: `export default async () => signal<number>("go");` });
      const runId = started.kind === "started" ? started.run.id : assert.fail("refused");
      const refused = (error: unknown): boolean =>
        TapedeckError.is(error) && error.status === 400 && error.code === "invalid_request" && /over HTTP only/.test(error.message);
      await assert.rejects(td.events()[Symbol.asyncIterator]().next(), refused);
      await assert.rejects(td.runs.events(runId)[Symbol.asyncIterator]().next(), refused);
      await td.runs.cancel(runId, { reason: "done" });
    } finally {
      await td.close();
    }
  });
});
