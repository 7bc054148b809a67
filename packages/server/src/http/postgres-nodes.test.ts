import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Run, Tapedeck, ToolContext, ToolsetSpec } from "@tapedeck/sdk";
import { describeWithPostgres } from "@tapedeck/engine/testing";
import { deferred, startPgNodes, untilRun, type PgNodes } from "./test-support/pg-nodes.js";

/**
 * Several `tapedeck serve` nodes on one PostgreSQL are interchangeable (DESIGN §10): a parked
 * run is woken by one node, a run of a node that dies or hangs is taken over by another once its
 * lease lapses (at once when it stops cleanly), and signals and worker answers reach a run
 * wherever it executes. Every node is a real child process; the worker is the SDK's, in this
 * process. Needs TAPEDECK_TEST_POSTGRES_URL.
 */
const TOOLSET: ToolsetSpec = {
  hostTools: { mail: { send: { description: "Sends a mail.", inputSchema: { type: "object" } } } },
  policies: { "mail.send": { onInterruption: "at_most_once" } },
};
const SEND = `import { mail } from "tapedeck:tools";
export default async () => await mail.send({ to: "ann" });`;
const SLEEP_THEN_SEND = `import { mail } from "tapedeck:tools";
export default async () => { await sleep(1500); return await mail.send({ to: "ann" }); };`;
const WAIT_FOR_GO = `export default async () => await signal("go");`;

async function started(td: Tapedeck, toolset: string, source: string): Promise<Run> {
  const run = await td.runs.start({ toolset, source });
  return run.kind === "started" ? run.run : assert.fail(run.diagnostics.map((d) => d.message).join("\n"));
}

/** `promise`, or a failure naming `what` (and the node's log) after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>, log: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up waiting for ${what} after ${ms} ms; its log:\n${log()}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const ended = (run: Run): boolean => run.status !== "running" && run.status !== "waiting";

/** The kinds of the run's journal entries that say a call went again or failed. */
async function resent(td: Tapedeck, id: string): Promise<string[]> {
  const { entries } = await td.runs.journal(id);
  return entries.filter((e) => e.kind === "call.attempt" || e.kind === "call.failed").map((e) => e.kind);
}

describeWithPostgres("several tapedeck serve nodes on one PostgreSQL", (url) => {
  void describe("two nodes up", () => {
    let pair: PgNodes;
    let toolset: string;
    before(async () => {
      pair = await startPgNodes(url, 2);
      toolset = (await pair.nodes[0]!.client(pair.adminKey).toolsets.create(TOOLSET)).id;
    });
    after(() => pair.close());

    void it("runs sleeping on node A are each woken once when due, though node B wakes runs too: each call after the sleep is sent once", async () => {
      const [a, b] = [pair.nodes[0]!.client(pair.adminKey), pair.nodes[1]!.client(pair.adminKey)];
      const served = new Map<string, number>();
      const worker = b
        .worker({
          tools: { mail: { send: (_args: never, ctx: ToolContext) => (served.set(ctx.idempotencyKey, (served.get(ctx.idempotencyKey) ?? 0) + 1), "sent") } },
        })
        .start();
      try {
        const runs = await Promise.all(Array.from({ length: 12 }, () => started(a, toolset, SLEEP_THEN_SEND)));
        for (const run of runs) {
          const done = await untilRun(b, run.id, "the run's end", ended);
          assert.deepEqual([done.status, done.output], ["completed", "sent"]);
          const { entries } = await b.runs.journal(run.id);
          assert.equal(entries.filter((e) => e.kind === "call.scheduled").length, 2, "the sleep and the call, each scheduled once");
          assert.deepEqual(await resent(b, run.id), []);
        }
        assert.deepEqual([...served.values()], Array<number>(runs.length).fill(1), "each run's call was sent once");
      } finally {
        await worker.stop();
      }
    });

    void it("a signal sent to node B reaches the run parked on node A, which goes on there", async () => {
      const [a, b] = [pair.nodes[0]!.client(pair.adminKey), pair.nodes[1]!.client(pair.adminKey)];
      const run = await started(a, toolset, WAIT_FOR_GO);
      await untilRun(a, run.id, "the run to wait for its signal", (r) => r.status === "waiting");
      const sent = await b.runs.signal(run.id, { name: "go", payload: { n: 7 } });
      assert.equal(sent.duplicate, false);
      const done = await untilRun(b, run.id, "the run's end", ended);
      assert.deepEqual([done.status, done.output], ["completed", { n: 7 }]);
    });

    void it("a worker polling node A serves a run started on node B", async () => {
      const [a, b] = [pair.nodes[0]!.client(pair.adminKey), pair.nodes[1]!.client(pair.adminKey)];
      const served: string[] = [];
      const worker = a.worker({ tools: { mail: { send: (_args: never, ctx: ToolContext) => (served.push(ctx.idempotencyKey), "sent from A") } } }).start();
      try {
        const run = await started(b, toolset, SEND);
        const done = await untilRun(b, run.id, "the run's end", ended);
        assert.deepEqual([done.status, done.output], ["completed", "sent from A"]);
        assert.deepEqual(served, [`${run.id}/1`]);
      } finally {
        await worker.stop();
      }
    });
  });

  void describe("a node that starts while another holds runs", () => {
    void it("listens first, resumes in the background, and says once how many runs the other live node holds (no error per run)", async () => {
      const pair = await startPgNodes(url, 1);
      try {
        const a = pair.nodes[0]!.client(pair.adminKey);
        const toolset = (await a.toolsets.create(TOOLSET)).id;
        // Runs executing on A, each with a host call no worker takes: left `running`, held by A.
        const runs = await Promise.all(Array.from({ length: 6 }, () => started(a, toolset, SEND)));
        for (const run of runs)
          await untilRun(a, run.id, `the run ${run.id} to call`, (r) => r.status === "running" && (r.waits ?? []).some((w) => w.kind === "worker"));
        const b = await pair.start();
        const summary = await within(
          60_000,
          "node B's line saying what it found left running",
          b.stderrLine((line) => line.includes("run(s) left running")),
          () => b.stderr(),
        );
        const fields = JSON.parse(summary) as { resumed: number; heldElsewhere: number; failed: number; msg: string };
        assert.deepEqual([fields.resumed, fields.heldElsewhere, fields.failed], [0, runs.length, 0], summary);
        assert.match(fields.msg, /6 held by other live nodes \(they go on there\)/);
        assert.doesNotMatch(b.stderr(), /cannot resume here|"level":50/, "no error line for runs another node holds");
        const lines = b.stderr().split("\n");
        assert.ok(
          lines.findIndex((line) => line.includes('"msg":"listening"')) < lines.findIndex((line) => line.includes("run(s) left running")),
          "it listened before it had looked at the runs",
        );
      } finally {
        await pair.close();
      }
    });
  });

  void describe("a node that goes away", () => {
    void it("node A killed (SIGKILL) while a worker holds its run's call: node B takes the run over and the worker's answer ends it there, sent once", async () => {
      const pair = await startPgNodes(url, 2, { leaseMs: 3_000 });
      try {
        const [nodeA, nodeB] = [pair.nodes[0]!, pair.nodes[1]!];
        const b = nodeB.client(pair.adminKey);
        const toolset = (await b.toolsets.create(TOOLSET)).id;
        const taken = deferred<string>();
        const answer = deferred<string>();
        const served: string[] = [];
        const worker = b
          .worker({
            tools: { mail: { send: (_args: never, ctx: ToolContext) => (served.push(ctx.idempotencyKey), taken.resolve(ctx.idempotencyKey), answer.promise) } },
          })
          .start();
        try {
          const run = await started(nodeA.client(pair.adminKey), toolset, SEND);
          assert.equal(await taken.promise, `${run.id}/1`);
          await nodeA.kill();
          answer.resolve("sent while A was down");
          const done = await untilRun(b, run.id, "node B to take the run over and end it", ended);
          assert.deepEqual([done.status, done.output], ["completed", "sent while A was down"]);
          assert.deepEqual(served, [`${run.id}/1`], "sent once");
          assert.deepEqual(await resent(b, run.id), []);
        } finally {
          await worker.stop();
        }
      } finally {
        await pair.close();
      }
    });

    void it("node A hung (SIGSTOP, its process still there): once its lease lapses node B takes over its parked run, and a signal sent to B meanwhile reaches it", async () => {
      const pair = await startPgNodes(url, 2, { leaseMs: 2_000 });
      const [nodeA, nodeB] = [pair.nodes[0]!, pair.nodes[1]!];
      let stopped = false;
      try {
        const [a, b] = [nodeA.client(pair.adminKey), nodeB.client(pair.adminKey)];
        const toolset = (await a.toolsets.create(TOOLSET)).id;
        const run = await started(a, toolset, WAIT_FOR_GO);
        await untilRun(a, run.id, "the run to wait for its signal", (r) => r.status === "waiting");
        process.kill(nodeA.pid, "SIGSTOP");
        stopped = true;
        // Sent while A's lease still holds: B leaves it as a request for A, which never takes it.
        await b.runs.signal(run.id, { name: "go", payload: "taken over" });
        const done = await untilRun(b, run.id, "node B to take the parked run over once A's lease lapsed", ended);
        assert.deepEqual([done.status, done.output], ["completed", "taken over"]);
      } finally {
        if (stopped) process.kill(nodeA.pid, "SIGCONT");
        await pair.close();
      }
    });

    void it("node A stopped cleanly (SIGTERM) while a worker holds its run's call: node B takes the run over at once, without waiting for the lease", async () => {
      // A lease far longer than the test's deadline, and B's scans a third of it apart: only A saying it gave its leases up can make B look in time.
      const pair = await startPgNodes(url, 2, { leaseMs: 120_000 });
      try {
        const [nodeA, nodeB] = [pair.nodes[0]!, pair.nodes[1]!];
        const b = nodeB.client(pair.adminKey);
        const toolset = (await b.toolsets.create(TOOLSET)).id;
        const taken = deferred<string>();
        const answer = deferred<string>();
        const worker = b
          .worker({ tools: { mail: { send: (_args: never, ctx: ToolContext) => (taken.resolve(ctx.idempotencyKey), answer.promise) } }, onError: () => {} })
          .start();
        try {
          const run = await started(nodeA.client(pair.adminKey), toolset, SEND);
          assert.equal(await taken.promise, `${run.id}/1`);
          assert.equal(await nodeA.stop(), 0, nodeA.stderr());
          answer.resolve("sent after A stopped");
          const done = await untilRun(b, run.id, "node B to take the run over and end it", ended, 20_000);
          assert.deepEqual([done.status, done.output], ["completed", "sent after A stopped"]);
          assert.deepEqual(await resent(b, run.id), []);
        } finally {
          await worker.stop();
        }
      } finally {
        await pair.close();
      }
    });
  });
});
