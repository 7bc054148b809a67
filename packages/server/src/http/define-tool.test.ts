import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { defineTool, ToolError, toolsetSpec, workerTools, type Run, type Tapedeck } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * `defineTool` through a real `tapedeck serve`: the same definitions make the toolset (schemas,
 * output type, policy) and the worker's handlers, and a run calls them.
 */

const price = defineTool<{ sku: string }, { sku: string; cents: number }>({
  group: "shop",
  name: "price",
  description: "The price of a product, in cents.",
  inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"], additionalProperties: false },
  outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "integer" } }, required: ["sku", "cents"] },
  execute: ({ sku }, ctx) => {
    if (sku === "gone") throw new ToolError("out_of_stock", `${sku} is sold out (${ctx.tool})`);
    return { sku, cents: sku.length * 100 };
  },
});

const refunds: string[] = [];
const refund = defineTool<{ order: string }>({
  group: "shop",
  name: "refund",
  description: "Refunds an order in full.",
  inputSchema: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  policy: { approval: true },
  execute: ({ order }, ctx) => {
    refunds.push(`${order} ${ctx.idempotencyKey}`);
    return { refunded: order };
  },
});

let server: ServeChild;
let td: Tapedeck;

before(async () => {
  server = await startServeChild();
  td = server.client(server.adminKey!);
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function start(toolset: string, source: string): Promise<Run> {
  const started = await td.runs.start({ toolset, source: `import { shop } from "tapedeck:tools";\n${source}` });
  if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
  return started.run;
}

void describe("defineTool", () => {
  it("one definition is the toolset's entry, its policy and the worker's handler", async () => {
    const toolset = await td.toolsets.create(toolsetSpec([price, refund]));
    const declarations = await td.toolsets.declarations(toolset.id);
    assert.ok(declarations.typescript.includes("price(args: { sku: string }): Promise<{ sku: string; cents: number }>;"), declarations.typescript);
    assert.match(declarations.typescript, /@approval[^\n]*\n\s*\*\/\n\s*refund\(args: \{ order: string \}\)/);
    const worker = td.worker({ tools: workerTools([price, refund]) }).start();
    try {
      const checked = await td.check({
        toolset: toolset.id,
        source: 'import { shop } from "tapedeck:tools";\nexport default async () => (await shop.price({ sku: "abc" })).cents.toFixed(0);',
      });
      assert.equal(checked.ok, true, "the output schema types the result in scripts");
      const run = await start(
        toolset.id,
        'export default async () => { const ok = await shop.price({ sku: "abc" }); try { await shop.price({ sku: "gone" }); } catch (e: any) { return { ok, failed: e.code + ": " + e.message }; } };',
      );
      const done = await td.runs.get(run.id, { wait: 30 });
      assert.deepEqual([done.status, done.output], ["completed", { ok: { sku: "abc", cents: 300 }, failed: "out_of_stock: gone is sold out (shop.price)" }]);

      const refunding = await start(toolset.id, 'export default async () => shop.refund({ order: "o-1" });');
      const waiting = await td.runs.get(refunding.id, { wait: 30 });
      assert.equal(waiting.status, "waiting", "the policy of the definition asks for approval");
      assert.deepEqual(refunds, [], "nothing is refunded before the approval");
      const [pending] = await td.approvals.pending(refunding.id);
      await td.approvals.approve(refunding.id, pending!.seq);
      const refunded = await td.runs.get(refunding.id, { wait: 30 });
      assert.deepEqual([refunded.status, refunded.output], ["completed", { refunded: "o-1" }]);
      assert.deepEqual(refunds, [`o-1 ${refunding.id}/1`]);
    } finally {
      await worker.stop();
    }
  });

  it("refuses a definition scripts could not call, and a tool defined twice, naming it", () => {
    const base = { description: "d", inputSchema: { type: "object" }, execute: () => null } as const;
    assert.throws(() => defineTool({ ...base, group: "my-shop", name: "price" }), /defineTool\("my-shop.price"\): group must be an identifier/);
    assert.throws(() => defineTool({ ...base, group: "shop", name: "has space" }), /name must be 1 to 128 letters/);
    assert.throws(() => defineTool({ ...base, group: "shop", name: "p", description: " " }), /description must say what the tool does/);
    assert.throws(() => defineTool({ ...base, group: "shop", name: "p", inputSchema: { type: "string" } }), /inputSchema must be a JSON Schema of an object/);
    assert.throws(() => toolsetSpec([price, price]), /shop\.price is defined twice/);
    assert.throws(() => workerTools([refund, refund]), /shop\.refund is defined twice/);
    assert.throws(() => toolsetSpec([price], { hostTools: { shop: { price: price.spec } } }), /shop\.price is already a host tool of the base/);
    assert.deepEqual(toolsetSpec([refund], { http: { allow: ["api.example.com"] } }), {
      http: { allow: ["api.example.com"] },
      hostTools: { shop: { refund: refund.spec } },
      policies: { "shop.refund": { approval: true } },
    });
  });
});
