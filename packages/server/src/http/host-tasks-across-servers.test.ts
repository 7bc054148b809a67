import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Run, Tapedeck, ToolContext, ToolsetSpec } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Host tasks live in the store, not in the server's memory: a `tapedeck serve` killed (SIGKILL)
 * with a host call queued, or held by a worker, loses neither. The next server on the data
 * folder resumes the run with that same attempt, so an `at_most_once` tool is not failed
 * `outcomeUnknown` for a call that was never sent (queued) or is still being served (held).
 * And two servers on one data folder are one queue: a worker polling either gets the calls of
 * runs the other runs.
 */
const schema = { type: "object" } as const;
const TOOLSET: ToolsetSpec = {
  hostTools: { mail: { send: { description: "Sends a mail.", inputSchema: schema } } },
  policies: { "mail.send": { onInterruption: "at_most_once" } },
};
const SCRIPT = `import { mail } from "tapedeck:tools";
export default async () => { try { return await mail.send({ to: "ann" }); } catch (e: any) { return e.code; } };`;

/** A worker's view of a call it got. */
interface Served {
  readonly key: string;
  readonly attempt: number;
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function started(td: Tapedeck, toolset: string): Promise<Run> {
  const run = await td.runs.start({ toolset, source: SCRIPT });
  return run.kind === "started" ? run.run : assert.fail(run.diagnostics.map((d) => d.message).join("\n"));
}

/** Reads the run until `holds` says yes; fails naming what it waited for after 20 s. */
async function until(td: Tapedeck, id: string, what: string, holds: (run: Run) => boolean): Promise<Run> {
  const deadline = Date.now() + 20_000;
  for (let run = await td.runs.get(id); ; run = await td.runs.get(id, { wait: 1 })) {
    if (holds(run)) return run;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}: ${JSON.stringify(run)}`);
  }
}

/** What the journal says of call #1 besides its scheduling and its outcome: attempts sent again, failures. */
async function resent(td: Tapedeck, id: string): Promise<string[]> {
  const { entries } = await td.runs.journal(id);
  return entries.filter((e) => e.kind === "call.attempt" || e.kind === "call.failed").map((e) => e.kind);
}

describe("host tasks across a server that is killed", () => {
  it("a call no worker took when the server died is sent by the next server as the same attempt: an at_most_once tool is served, not outcomeUnknown", async () => {
    let server: ServeChild = await startServeChild();
    const adminKey = server.adminKey!;
    try {
      let td = server.client(adminKey);
      const toolset = (await td.toolsets.create(TOOLSET)).id;
      const run = await started(td, toolset);
      // Shown waiting for a worker only once its task is queued in the store (and a moment passed).
      await until(td, run.id, "the call to wait for a worker", (r) => r.waits?.some((w) => w.kind === "worker") === true);
      await server.kill();

      server = await startServeChild({ dataDir: server.dataDir });
      td = server.client(adminKey);
      const served = deferred<Served>();
      const worker = td
        .worker({ tools: { mail: { send: (_args: never, ctx: ToolContext) => (served.resolve({ key: ctx.idempotencyKey, attempt: ctx.attempt }), "sent") } } })
        .start();
      try {
        assert.deepEqual(await served.promise, { key: `${run.id}/1`, attempt: 1 }, "the attempt the first server queued");
        const done = await until(td, run.id, "the run's end", (r) => r.status !== "running");
        assert.deepEqual([done.status, done.output], ["completed", "sent"]);
        assert.deepEqual(await resent(td, run.id), [], "nothing was sent again or failed");
      } finally {
        await worker.stop();
      }
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      server.cleanup();
    }
  });

  it("a call a worker holds when the server dies is answered by that worker to the next server: the run gets its result", async () => {
    let server: ServeChild = await startServeChild();
    const adminKey = server.adminKey!;
    const port = Number(new URL(server.url).port);
    try {
      let td = server.client(adminKey);
      const toolset = (await td.toolsets.create(TOOLSET)).id;
      const taken = deferred<Served>();
      const answer = deferred<string>();
      // The worker keeps the server's address: the next server listens on the same port.
      const worker = td
        .worker({
          tools: { mail: { send: (_args: never, ctx: ToolContext) => (taken.resolve({ key: ctx.idempotencyKey, attempt: ctx.attempt }), answer.promise) } },
          onError: () => {},
        })
        .start();
      try {
        const run = await started(td, toolset);
        assert.deepEqual(await taken.promise, { key: `${run.id}/1`, attempt: 1 });
        await server.kill();
        server = await startServeChild({ dataDir: server.dataDir, port });
        td = server.client(adminKey);
        answer.resolve("sent while the server restarted");
        const done = await until(td, run.id, "the run's end", (r) => r.status !== "running");
        assert.deepEqual([done.status, done.output], ["completed", "sent while the server restarted"]);
        assert.deepEqual(await resent(td, run.id), [], "nothing was sent again or failed");
      } finally {
        await worker.stop();
      }
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      server.cleanup();
    }
  });
});

describe("host tasks across servers sharing a data folder", () => {
  it("a worker polling one server gets the call of a run the other server runs, and its answer ends that run", async () => {
    const running = await startServeChild();
    const adminKey = running.adminKey!;
    let polled: ServeChild | undefined;
    try {
      polled = await startServeChild({ dataDir: running.dataDir });
      const td = running.client(adminKey);
      const toolset = (await td.toolsets.create(TOOLSET)).id;
      const run = await started(td, toolset);
      const served: Served[] = [];
      const worker = polled
        .client(adminKey)
        .worker({ tools: { mail: { send: (_args: never, ctx: ToolContext) => (served.push({ key: ctx.idempotencyKey, attempt: ctx.attempt }), "sent") } } })
        .start();
      try {
        const done = await until(td, run.id, "the run's end", (r) => r.status !== "running");
        assert.deepEqual([done.status, done.output], ["completed", "sent"]);
        assert.deepEqual(served, [{ key: `${run.id}/1`, attempt: 1 }], "served once, by the worker polling the other server");
        assert.deepEqual(await resent(td, run.id), [], "nothing was sent again or failed");
      } finally {
        await worker.stop();
      }
    } finally {
      if (polled) assert.equal(await polled.stop(), 0, polled.stderr());
      assert.equal(await running.stop(), 0, running.stderr());
      running.cleanup();
    }
  });
});
