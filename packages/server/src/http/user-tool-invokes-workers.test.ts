import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HostToolSpec } from "@tapedeck/protocol";
import type { JournalEntry, Run, Tapedeck, ToolContext, ToolsetSpec } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { startWorkerChild } from "./test-support/worker-child.js";

/**
 * A sandboxed user tool invoking a host tool served by an SDK worker through a real `tapedeck
 * serve`: each invocation is a host task of its own, sent with its sub-call's key
 * `{run}/{seq}.{n}` (what the worker sees as ctx.idempotencyKey) — invocations made at once, and
 * one after another, of the same call of the same run —, journaled as a `call.sub`; after the
 * server is killed mid-invocation, the next server re-runs the tool against what was recorded,
 * and the invocation a worker held is answered to it by that worker, not sent again; an
 * at_most_once tool whose worker dies answers outcomeUnknown.
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

  it("an at_most_once host tool whose worker is killed mid-invocation answers outcomeUnknown, recorded: it is never sent again", async () => {
    const server: ServeChild = await startServeChild();
    try {
      const td = server.client(server.adminKey!);
      const toolset = (
        await td.toolsets.create({
          hostTools: { mail: { send: { description: "Sends a mail.", inputSchema: { type: "object" } } } },
          policies: { "mail.send": { heartbeatTimeout: "2s", onInterruption: "at_most_once" } },
          userTools: {
            tools: {
              notify: {
                description: "Sends a mail; answers what came of it.",
                code: `import { mail } from "tapedeck:tools";
                  export default async () => { try { await mail.send({ to: "ann" }); return "sent"; } catch (e) { return (e as { code: string }).code; } };`,
                grants: { tools: ["mail.send"] },
              },
            },
          },
        })
      ).id;
      const child = startWorkerChild(server.url, server.adminKey!, ["mail.send"]);
      const started = await td.runs.start({ toolset, source: `import { tools } from "tapedeck:tools";\nexport default async () => tools.notify({});` });
      const run = started.kind === "started" ? started.run : assert.fail(JSON.stringify(started.diagnostics));
      assert.deepEqual(await child.started(), { tool: "mail.send", key: `${run.id}/1.1`, attempt: 1 });
      await child.kill();
      const done = await ended(td, run.id);
      assert.deepEqual([done.status, done.output], ["completed", "outcomeUnknown"], JSON.stringify(done));
      assert.deepEqual(await subCalls(td, run.id), ["/1.1 mail.send outcomeUnknown"]);
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      server.cleanup();
    }
  });

  it("after the server is killed mid-invocation, the next one re-runs the tool: what was answered is not sent again, and the worker's answer to the one it held comes to the re-run", async () => {
    let server: ServeChild = await startServeChild();
    const adminKey = server.adminKey!;
    const port = Number(new URL(server.url).port);
    const served: Served[] = [];
    const third = deferred<void>();
    // The third invocation is answered only once the next server runs.
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
                if (args.sku !== "ccc") return price(args);
                third.resolve();
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
        held.resolve(price({ sku: "ccc" }));
        const done = await ended(td, run.id);
        assert.deepEqual([done.status, done.output], ["completed", { cents: 600 }], JSON.stringify(done));
        const keys = served.map((s) => s.key.slice(run.id.length));
        assert.deepEqual(keys.slice(0, 2).sort(), ["/1.1", "/1.2"]);
        assert.deepEqual(keys.slice(2), ["/1.3"], "the invocation the worker held was not sent again: its task stood");
        assert.deepEqual(
          served.map((s) => s.attempt),
          [1, 1, 1],
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
