import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import type { HealthStatus } from "@tapedeck/protocol/api";
import type { Run, Tapedeck } from "@tapedeck/sdk";
import { describeWithPostgres } from "@tapedeck/engine/testing";
import { startPgNodes, untilRun, type PgNodes } from "./test-support/pg-nodes.js";
import { startPrivateCluster, type PrivateCluster } from "./test-support/pg-private-cluster.js";
import type { ServeChild } from "./test-support/serve-child.js";

/**
 * Nodes outlive their database: PostgreSQL itself is stopped and restarted under two busy
 * `tapedeck serve` nodes (`pg_ctl restart -m fast`, then `pg_ctl stop -m fast` held for some
 * seconds and started again), which ends every connection with FATAL 57P01 — the listening one,
 * idle ones, and ones checked out by a write between two statements. Each node stays up, says
 * 503 on `/health` while the database is down and 200 once it is back, and runs started before
 * go on. The cluster is the test's own (other files' tests share the main one). Needs
 * TAPEDECK_TEST_POSTGRES_URL (only to say PostgreSQL is there; the cluster is made with
 * `scripts/pg-cluster.sh`).
 */
const TOOLSET = { hostTools: { shop: { price: { description: "A price.", inputSchema: { type: "object" } } } } };
/** Calls one after another for as long as the test lasts: writes in flight on every restart. */
const BUSY = `import { shop } from "tapedeck:tools";
export default async () => { let n = 0; for (let i = 0; i < 400; i++) n += (await shop.price({ i })) as number; return n; };`;
const WAIT_FOR_GO = `export default async () => await signal("go");`;

/** How long the database stays stopped: several of the nodes' probes (1 s apart) and their writes' backoff fall in it. */
const HELD_DOWN_MS = 4_000;

async function healthCode(node: ServeChild): Promise<{ code: number; body: HealthStatus }> {
  const response = await fetch(`${node.url}/health`);
  return { code: response.status, body: (await response.json()) as HealthStatus };
}

/** Asks `/health` every 100 ms until `holds`; fails with the last answer after 60 s, or at once if the node exits. */
async function untilHealth(node: ServeChild, what: string, holds: (code: number) => boolean): Promise<HealthStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    assert.ok(node.running(), `the node exited while waiting for ${what}; its stderr:\n${node.stderr()}`);
    const { code, body } = await healthCode(node);
    if (holds(code)) return body;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}: /health answered ${code} ${JSON.stringify(body)}`);
    await delay(100);
  }
}

async function started(td: Tapedeck, toolset: string, source: string): Promise<Run> {
  const run = await td.runs.start({ toolset, source });
  return run.kind === "started" ? run.run : assert.fail(run.diagnostics.map((d) => d.message).join("\n"));
}

describeWithPostgres("tapedeck serve nodes while PostgreSQL stops and restarts", () => {
  void describe("two busy nodes", () => {
    let cluster: PrivateCluster;
    let pair: PgNodes;
    before(async () => {
      cluster = await startPrivateCluster();
      // A short lease: a run whose holder's renewals failed while the database was down is taken up again soon after.
      pair = await startPgNodes(cluster.url, 2, { leaseMs: 3_000 });
    });
    after(async () => {
      await pair?.close();
      await cluster?.close();
    });

    void it("stay up through a fast restart and a fast stop held for seconds, answer 503 while the database is down and 200 after, and runs started before complete", async () => {
      const nodes = pair.nodes;
      const [a, b] = [nodes[0]!.client(pair.adminKey), nodes[1]!.client(pair.adminKey)];
      const toolset = (await a.toolsets.create(TOOLSET)).id;
      const workers = [a, b].map((td) => td.worker({ tools: { shop: { price: () => 1 } } }).start());
      try {
        const busy = await Promise.all([started(a, toolset, BUSY), started(b, toolset, BUSY), started(a, toolset, BUSY)]);
        const waiting = await started(a, toolset, WAIT_FOR_GO);
        await untilRun(a, waiting.id, "the run to wait for its signal", (r) => r.status === "waiting");
        // Calls under way on both nodes: the restart ends connections with writes in flight.
        for (const run of busy) await untilRun(a, run.id, `the busy run ${run.id} to make calls`, (r) => r.journalLength > 20);

        await cluster.restart();
        for (const node of nodes) await untilHealth(node, "/health to answer 200 after the restart", (code) => code === 200);

        await cluster.stop();
        for (const node of nodes) {
          const down = await untilHealth(node, "/health to say the stopped database is unreachable", (code) => code === 503);
          assert.equal(down.status, "unavailable");
          assert.match(down.problem ?? "", /PostgreSQL store .* cannot be reached/);
        }
        // The scenario itself: the database stays down for a while (no event to wait for).
        await delay(HELD_DOWN_MS);
        for (const node of nodes) assert.ok(node.running(), `a node exited while the database was down; its stderr:\n${node.stderr()}`);
        await cluster.start();
        for (const node of nodes)
          assert.deepEqual(await untilHealth(node, "/health to answer 200 once the database is back", (code) => code === 200), { status: "ok" });

        await b.runs.signal(waiting.id, { name: "go", payload: "back" });
        const done = await untilRun(b, waiting.id, "the run waiting for its signal to end", (r) => r.status !== "waiting" && r.status !== "running", 60_000);
        assert.deepEqual([done.status, done.output], ["completed", "back"]);
        for (const run of busy) {
          const end = await untilRun(a, run.id, `the busy run ${run.id} to end`, (r) => r.status !== "waiting" && r.status !== "running", 120_000);
          assert.deepEqual([end.status, end.output], ["completed", 400], `the busy run ${run.id} completed: ${JSON.stringify(end)}`);
        }
        for (const node of nodes) {
          assert.ok(node.running(), `the node is up; its stderr:\n${node.stderr()}`);
          assert.doesNotMatch(node.stderr(), /Unhandled|uncaught/i);
          assert.match(node.stderr(), /this node takes no work/);
          assert.match(node.stderr(), /the store answers again/);
        }
      } finally {
        await Promise.all(workers.map((worker) => worker.stop()));
      }
    });
  });
});
