import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_POLL_MS } from "@tapedeck/engine";
import { MAX_POLL_WAIT_MS, ToolError, type Run, type Tapedeck, type ToolContext, type ToolsetSpec } from "@tapedeck/sdk";
import { cli } from "../cli/cli.js";
import { capture } from "../cli/test-support/in-process.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { startWorkerChild } from "./test-support/worker-child.js";

/**
 * Host tools served by SDK workers through a real `tapedeck serve` (no host module: every host
 * tool is a task for workers): results and failures, the call's context, workers killed mid-call
 * (SIGKILL) under `retry` and `at_most_once`, cancellation reaching the worker, and scopes.
 */
const schema = { type: "object" } as const;
const TOOLSET: ToolsetSpec = {
  hostTools: {
    shop: {
      price: { description: "A price.", inputSchema: schema },
      charge: { description: "Charges.", inputSchema: schema },
      wait: { description: "Waits to be cancelled.", inputSchema: schema },
    },
    mail: { send: { description: "Sends a mail.", inputSchema: schema } },
  },
  policies: {
    "shop.charge": { heartbeatTimeout: "2s" },
    "mail.send": { heartbeatTimeout: "2s", onInterruption: "at_most_once" },
    "shop.wait": { heartbeatTimeout: "1s" },
  },
};
const HEADER = `import { shop, mail } from "tapedeck:tools";\n`;

let server: ServeChild;
let td: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild();
  td = server.client(server.adminKey!);
  toolset = (await td.toolsets.create(TOOLSET)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function start(source: string, client: Tapedeck = td, options: { namespace?: string } = {}): Promise<Run> {
  const started = await client.runs.start({ toolset, source: HEADER + source, ...options });
  if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
  return started.run;
}

const settled = async (id: string): Promise<Run> => td.runs.get(id, { wait: 30 });

/** A promise and the function that resolves it. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("host tools through workers", () => {
  it("the poll window is the engine's (the SDK documents the same bound)", () => {
    assert.equal(MAX_POLL_WAIT_MS, MAX_POLL_MS);
  });

  it("a worker in this process serves a run's calls: results, the call's context, failures with their codes", async () => {
    const contexts: Omit<ToolContext, "signal" | "heartbeat">[] = [];
    const worker = td
      .worker({
        tools: {
          shop: {
            price: async ({ sku }: { sku: string }, ctx: ToolContext) => {
              const { signal: _, heartbeat, ...rest } = ctx;
              await heartbeat();
              contexts.push(rest);
              if (sku === "gone") throw new ToolError("out_of_stock", `${sku} is sold out`);
              if (sku === "shaped") throw Object.assign(new Error("slow down"), { code: "rate_limited" });
              if (sku === "plain") throw new Error("boom");
              return { sku, cents: sku.length * 100 };
            },
          },
        },
      })
      .start();
    try {
      const run = await start(
        `export default async () => { const ok = await shop.price({ sku: "abc" }); const codes = []; for (const sku of ["gone", "shaped", "plain"]) { try { await shop.price({ sku }); } catch (e: any) { codes.push(e.code + ": " + e.message); } } return { ok, codes }; };`,
      );
      const done = await settled(run.id);
      assert.deepEqual(
        [done.status, done.output],
        ["completed", { ok: { sku: "abc", cents: 300 }, codes: ["out_of_stock: gone is sold out", "rate_limited: slow down", "tool_error: boom"] }],
      );
      assert.equal(contexts.length, 4);
      assert.deepEqual(
        contexts.map((c) => [c.tool, c.idempotencyKey, c.runId, c.seq, c.attempt]),
        [1, 2, 3, 4].map((seq) => ["shop.price", `${run.id}/${seq}`, run.id, seq, 1]),
      );
      assert.match(contexts[0]!.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    } finally {
      await worker.stop();
    }
  });

  it("a worker killed mid-call: under `retry` the call goes to another worker with the same key (attempt 2); under `at_most_once` it ends outcomeUnknown", async () => {
    const child = startWorkerChild(server.url, server.adminKey!, ["shop.charge", "mail.send"]);
    const charge = await start(`export default async () => shop.charge({ cents: 500 });`);
    const mail = await start(`export default async () => { try { return await mail.send({ to: "ann" }); } catch (e: any) { return e.code; } };`);
    const held = [await child.started(), await child.started()].sort((a, b) => a.tool.localeCompare(b.tool));
    assert.deepEqual(held, [
      { tool: "mail.send", key: `${mail.id}/1`, attempt: 1 },
      { tool: "shop.charge", key: `${charge.id}/1`, attempt: 1 },
    ]);
    await child.kill();
    // The second worker starts only now, so the first attempts could not have gone to it.
    const second = deferred<{ key: string; attempt: number }>();
    const worker = td
      .worker({
        tools: { shop: { charge: (_args: never, ctx: ToolContext) => (second.resolve({ key: ctx.idempotencyKey, attempt: ctx.attempt }), "charged") } },
      })
      .start();
    try {
      assert.deepEqual(await second.promise, { key: `${charge.id}/1`, attempt: 2 });
      const [charged, mailed] = await Promise.all([settled(charge.id), settled(mail.id)]);
      assert.deepEqual([charged.status, charged.output], ["completed", "charged"]);
      assert.deepEqual([mailed.status, mailed.output], ["completed", "outcomeUnknown"]);
      const attempt = (await td.runs.journal(charge.id)).entries.find((e) => e.kind === "call.attempt");
      assert.match(attempt?.kind === "call.attempt" ? attempt.reason : "", /missed its heartbeat/);
    } finally {
      await worker.stop();
    }
  });

  it("a worker logs one line per problem, never a stack trace: each failed poll with its retry delay, each result it drops", async () => {
    const own = await startServeChild();
    const child = startWorkerChild(own.url, own.adminKey!, ["shop.price"]);
    try {
      const client = own.client(own.adminKey!);
      const ownToolset = (await client.toolsets.create(TOOLSET)).id;
      const begin = async (): Promise<Run> => {
        const started = await client.runs.start({ toolset: ownToolset, source: `${HEADER}export default async () => shop.price({});` });
        return started.kind === "started" ? started.run : assert.fail("refused");
      };
      // The server no longer takes a result: its run was cancelled while the tool ran.
      const cancelled = await begin();
      const first = await child.started();
      await client.runs.cancel(cancelled.id);
      child.finish(first.key);
      assert.equal(
        await child.stderrLine(),
        `tapedeck worker: the server did not take the result of shop.price (run ${cancelled.id}, call #1, attempt 1): the run no longer wants it (it was cancelled, or the attempt timed out). It is dropped.`,
      );
      // The server goes away under a running call: the polls fail, and the result cannot be delivered.
      const run = await begin();
      const held = await child.started();
      await own.kill();
      child.finish(held.key);
      const lines: string[] = [];
      const unreachable = `Cannot reach Tapedeck at ${own.url}: fetch failed`;
      const polls = (delay: string) =>
        lines.some((line) => line.startsWith(`tapedeck worker: polling for calls failed: ${unreachable}`) && line.endsWith(`. Polling again in ${delay}.`));
      const dropped = () =>
        lines.some(
          (line) =>
            line.startsWith(`tapedeck worker: could not deliver the result of shop.price (run ${run.id}, call #1, attempt 1): ${unreachable}`) &&
            line.endsWith(
              "It is dropped: the call's lease lapses and the call follows its policy (sent again, to a worker, with the same idempotency key; or outcomeUnknown under at_most_once).",
            ),
        );
      while (!(polls("1 s") && polls("2 s") && dropped())) {
        const line = await child.stderrLine();
        assert.match(line, /^tapedeck worker: /, `one line per problem, no stack trace: ${JSON.stringify(line)} after ${JSON.stringify(lines)}`);
        lines.push(line);
      }
    } finally {
      await child.kill();
      await own.kill();
      own.cleanup();
    }
  });

  it("a call no worker serves waits for one (no default attempt timeout), and get_run, the agent text and `tapedeck show` say so; the worker that starts takes it", async () => {
    const crm = (await td.toolsets.create({ hostTools: { crm: { lookup_customer: { description: "Finds a customer.", inputSchema: schema } } } })).id;
    const tools = td.namespace("ops").agentTools({ toolset: crm, labels: { conversation: "no-worker" } });
    const code = `import { crm } from "tapedeck:tools";\nexport default async () => crm.lookup_customer({ email: "ann@acme.test" });`;
    const started = await tools.handle("run_script", { code, wait: 0 }, { toolCallId: "lookup" });
    const id = started.run?.id ?? assert.fail(started.content);
    // The call is shown once it has waited a moment untaken (most calls are taken at once).
    const deadline = Date.now() + 20_000;
    let run = await td.runs.get(id);
    while (!run.waits?.some((wait) => wait.kind === "worker") && Date.now() < deadline) run = await td.runs.get(id, { wait: 1 });
    assert.equal(run.status, "running");
    const [wait] = run.waits ?? [];
    assert.deepEqual(
      wait && { ...wait, since: 0, lastPollAt: 0 },
      { kind: "worker", seq: 1, tool: "crm.lookup_customer", since: 0, lastPollAt: 0 },
      JSON.stringify(run.waits),
    );
    const text = (await tools.handle("get_run", { run_id: id }, { toolCallId: "read" })).content;
    assert.match(
      text,
      /is still running\. .*\n\nCalls waiting for a worker:\n- call #1: waiting for a worker to serve `crm\.lookup_customer` \(no worker has polled for \d+ s\)\. Nothing was sent yet; the call goes on once a worker takes it\. The application runs the workers; you cannot start one\./,
    );
    const shown = capture();
    assert.equal(await cli(["show", id, "--data", server.dataDir], shown), 0, shown.err.join("\n"));
    assert.match(shown.out.join("\n"), /^waits {4}#1: waiting for a worker to serve `crm\.lookup_customer` \(no worker has polled for \d+ s\)$/m);

    const child = startWorkerChild(server.url, server.adminKey!, ["crm.lookup_customer"]);
    try {
      const call = await child.started();
      assert.deepEqual(call, { tool: "crm.lookup_customer", key: `${id}/1`, attempt: 1 }, "the wait for a worker was not an attempt");
      child.finish(call.key);
      const done = await settled(id);
      assert.deepEqual([done.status, done.output, done.waits], ["completed", { finished: true }, undefined]);
    } finally {
      await child.kill();
    }
  });

  it("a queueTimeout fails a call no worker takes in time with queue_timeout, which says nothing was sent", async () => {
    const spec: ToolsetSpec = {
      hostTools: { crm: { notify: { description: "Notifies.", inputSchema: schema } } },
      policies: { "crm.notify": { queueTimeout: "1s" } },
    };
    const id = (await td.toolsets.create(spec)).id;
    const started = await td.runs.start({
      toolset: id,
      source: `import { crm } from "tapedeck:tools";\nexport default async () => { try { return await crm.notify({}); } catch (e: any) { return [e.code, e.message]; } };`,
    });
    const run = started.kind === "started" ? started.run : assert.fail("refused");
    const done = await settled(run.id);
    assert.equal(done.status, "completed", JSON.stringify(done.error));
    const [code, message] = done.output as [string, string];
    assert.equal(code, "queue_timeout");
    assert.match(
      message,
      /^No worker took the call to crm\.notify within 1s, its queueTimeout policy \(no worker has polled for it for \d+ s\): nothing was sent/,
    );
  });

  it("cancelling a run tells the worker holding its call: its signal aborts (the next heartbeat answers `cancelled`)", async () => {
    const begun = deferred<void>();
    const aborted = deferred<string>();
    const worker = td
      .worker({
        tools: {
          shop: {
            wait: (_args: never, ctx: ToolContext) =>
              new Promise((_resolve, reject) => {
                begun.resolve();
                ctx.signal.addEventListener("abort", () => {
                  aborted.resolve(String((ctx.signal.reason as Error).message));
                  reject(new Error("stopped"));
                });
              }),
          },
        },
      })
      .start();
    try {
      const run = await start(`export default async () => shop.wait({});`);
      await begun.promise;
      assert.equal((await td.runs.cancel(run.id, { reason: "changed my mind" })).status, "cancelled");
      assert.match(await aborted.promise, /no longer wants this call/);
    } finally {
      await worker.stop();
    }
  });

  it("stop() ends a held poll at once and aborts the running tools", async () => {
    const begun = deferred<void>();
    const worker = td
      .worker({
        tools: {
          mail: {
            send: (_args: never, ctx: ToolContext) =>
              new Promise((_resolve, reject) => {
                begun.resolve();
                ctx.signal.addEventListener("abort", () => reject(new Error("aborted")));
              }),
          },
        },
      })
      .start();
    const run = await start(`export default async () => mail.send({});`);
    await begun.promise;
    await worker.stop();
    await worker.stopped;
    await td.runs.cancel(run.id);
  });

  it("a worker sees only the calls of runs in its key's scope; leases of other scopes answer `lost`", async () => {
    const aliceKey = await createKey(server.dataDir, "--namespace", "alice");
    const alice = server.client(aliceKey);
    const seen: string[] = [];
    const aliceWorker = alice.worker({ tools: { shop: { price: (_args: never, ctx: ToolContext) => (seen.push(ctx.runId), "alice's") } } }).start();
    try {
      const bobRun = await start(`export default async () => shop.price({});`, td, { namespace: "bob" });
      const aliceRun = await start(`export default async () => shop.price({});`, td, { namespace: "alice" });
      assert.equal((await settled(aliceRun.id)).output, "alice's");
      // Bob's call waited the whole time, under alice's polling worker: an admin poll finds it.
      const poll = await raw("/v1/tasks/poll", server.adminKey!, { tools: ["shop.price"], waitMs: 10_000 });
      const task = (poll as { tasks: { id: string; lease: string; runId: string }[] }).tasks[0];
      assert.ok(task);
      assert.equal(task.runId, bobRun.id);
      assert.deepEqual(await raw(`/v1/tasks/${task.id}/heartbeat`, aliceKey, { lease: task.lease }), { status: "lost" });
      assert.deepEqual(await raw(`/v1/tasks/${task.id}/complete`, aliceKey, { lease: task.lease, result: "stolen" }), { status: "lost" });
      assert.deepEqual(await raw(`/v1/tasks/${task.id}/heartbeat`, server.adminKey!, { lease: "not-the-lease" }), { status: "lost" });
      assert.deepEqual(await raw(`/v1/tasks/${task.id}/complete`, server.adminKey!, { lease: task.lease, result: "bob's" }), { status: "ok" });
      assert.equal((await settled(bobRun.id)).output, "bob's");
      assert.deepEqual(seen, [aliceRun.id]);
      const toolsetBound = await raw("/v1/tasks/poll", server.adminKey!, { tools: ["shop.*"], waitMs: 0, toolset: "ts_other" });
      assert.deepEqual(toolsetBound, { tasks: [] });
    } finally {
      await aliceWorker.stop();
    }
  });
});

async function raw(path: string, key: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, path);
  return response.json();
}
