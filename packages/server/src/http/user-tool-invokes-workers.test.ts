import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HostToolSpec } from "@tapedeck/protocol";
import type { JournalEntry, Run, Tapedeck, ToolContext, ToolsetSpec } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * A sandboxed user tool invoking a host tool served by an SDK worker through a real `tapedeck
 * serve`: each invocation is a host task of its own, sent with its sub-call's key
 * `{run}/{seq}.{n}` (what the worker sees as ctx.idempotencyKey) — invocations made at once, and
 * one after another, of the same call of the same run —, journaled as a `call.sub`; after the
 * server is killed mid-invocation, the next server re-runs the tool against what was recorded,
 * and only the invocation that had no answer reaches a worker again, with its key.
 */
const PRICE: HostToolSpec = {
  description: "The price of a SKU.",
  inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
  outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "number" } }, required: ["sku", "cents"] },
};

const TOOLSET: ToolsetSpec = {
  hostTools: { shop: { price: PRICE } },
  userTools: {
    tools: {
      basket: {
        description: "Prices two SKUs at once, then a third.",
        code: `import { shop } from "tapedeck:tools";
          export default async () => {
            const [a, b] = await Promise.all([shop.price({ sku: "a" }), shop.price({ sku: "bb" })]);
            const c = await shop.price({ sku: "ccc" });
            return { cents: a.cents + b.cents + c.cents };
          };`,
        grants: { tools: ["shop.price"] },
      },
    },
  },
};

const SCRIPT = `import { tools } from "tapedeck:tools";\nexport default async () => tools.basket({});`;

interface Served {
  readonly key: string;
  readonly seq: number;
  readonly attempt: number;
}

async function start(td: Tapedeck, toolset: string): Promise<Run> {
  const started = await td.runs.start({ toolset, source: SCRIPT });
  return started.kind === "started" ? started.run : assert.fail(started.diagnostics.map((d) => d.message).join("\n"));
}

/** Reads the run until it ends; fails saying how it stood after 30 s. */
async function ended(td: Tapedeck, id: string): Promise<Run> {
  const deadline = Date.now() + 30_000;
  for (let run = await td.runs.get(id); ; run = await td.runs.get(id, { wait: 1 })) {
    if (run.status !== "running") return run;
    if (Date.now() > deadline) assert.fail(`the run did not end: ${JSON.stringify(run)}`);
  }
}

async function subCalls(td: Tapedeck, id: string): Promise<string[]> {
  const { entries } = await td.runs.journal(id);
  return entries
    .filter((e): e is Extract<JournalEntry, { kind: "call.sub" }> => e.kind === "call.sub")
    .map((e) => `${e.key.slice(id.length)} ${e.tool} ${e.answer.ok ? "ok" : e.answer.error.code}`)
    .sort();
}

/** A promise and the function that resolves it. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const price = ({ sku }: { sku: string }) => ({ sku, cents: sku.length * 100 });

describe("a user tool invoking host tools served by workers", () => {
  it("each invocation, at once or one after another, is a task of its own sent with its sub-call's key, and journaled", async () => {
    const server: ServeChild = await startServeChild();
    try {
      const td = server.client(server.adminKey!);
      const toolset = (await td.toolsets.create(TOOLSET)).id;
      const served: Served[] = [];
      const worker = td
        .worker({
          tools: {
            shop: {
              price: (args: { sku: string }, ctx: ToolContext) => (served.push({ key: ctx.idempotencyKey, seq: ctx.seq, attempt: ctx.attempt }), price(args)),
            },
          },
        })
        .start();
      try {
        const run = await start(td, toolset);
        const done = await ended(td, run.id);
        assert.deepEqual([done.status, done.output], ["completed", { cents: 600 }], JSON.stringify(done));
        assert.deepEqual(
          served.map((s) => [s.key, s.seq, s.attempt]).sort(),
          [1, 2, 3].map((n) => [`${run.id}/1.${n}`, 1, 1]),
          "the worker got each invocation once, by its own key",
        );
        assert.deepEqual(await subCalls(td, run.id), ["/1.1 shop.price ok", "/1.2 shop.price ok", "/1.3 shop.price ok"]);
      } finally {
        await worker.stop();
      }
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      server.cleanup();
    }
  });

  it("after the server is killed mid-invocation, the next one re-runs the tool: what was answered is not sent again, the rest goes with its key", async () => {
    let server: ServeChild = await startServeChild();
    const adminKey = server.adminKey!;
    const port = Number(new URL(server.url).port);
    const served: Served[] = [];
    const third = deferred<void>();
    // The first attempt of the third invocation never answers: it ends when its worker hears it was given up.
    const held = deferred<{ sku: string; cents: number }>();
    try {
      let td = server.client(adminKey);
      const toolset = (await td.toolsets.create(TOOLSET)).id;
      // The worker keeps the server's address: the next server listens on the same port.
      const worker = td
        .worker({
          tools: {
            shop: {
              price: (args: { sku: string }, ctx: ToolContext) => {
                served.push({ key: ctx.idempotencyKey, seq: ctx.seq, attempt: ctx.attempt });
                if (args.sku !== "ccc" || served.filter((s) => s.key === ctx.idempotencyKey).length > 1) return price(args);
                third.resolve();
                ctx.signal.addEventListener("abort", () => held.resolve(price(args)), { once: true });
                return held.promise;
              },
            },
          },
          onError: () => {},
        })
        .start();
      try {
        const run = await start(td, toolset);
        await third.promise;
        await server.kill();
        server = await startServeChild({ dataDir: server.dataDir, port });
        td = server.client(adminKey);
        const done = await ended(td, run.id);
        assert.deepEqual([done.status, done.output], ["completed", { cents: 600 }], JSON.stringify(done));
        const keys = served.map((s) => s.key.slice(run.id.length));
        assert.deepEqual(keys.slice(0, 2).sort(), ["/1.1", "/1.2"]);
        assert.deepEqual(keys.slice(2), ["/1.3", "/1.3"], "only the invocation in flight was sent again, with its key");
        assert.deepEqual(
          served.slice(2).map((s) => s.attempt),
          [1, 2],
          "as the attempt of the call it is made within",
        );
        assert.deepEqual(await subCalls(td, run.id), ["/1.1 shop.price ok", "/1.2 shop.price ok", "/1.3 shop.price ok"]);
      } finally {
        held.resolve({ sku: "ccc", cents: 0 });
        await worker.stop();
      }
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      server.cleanup();
    }
  });
});
