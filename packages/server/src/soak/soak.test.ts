import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeWithPostgres } from "@tapedeck/engine/testing";
import { runSoak, soakFailures, type SoakOptions } from "./soak.js";
import { soakTable } from "./soak-table.js";

/**
 * The crash and chaos soak, short (the full one is `npm run soak`): real `tapedeck serve` nodes,
 * an SDK worker, the fixture MCP server; nodes, workers and the database struck at random points
 * of the workload (the seed is printed). Nothing may be lost, stranded, sent twice or unverifiable,
 * and every strike planned must have happened (a soak that struck nothing proves nothing).
 */
const seed = Number(process.env.TAPEDECK_SOAK_SEED ?? Math.floor(Math.random() * 2 ** 31));

async function soak(options: SoakOptions): Promise<void> {
  const figures = await runSoak(options);
  console.log(soakTable([figures]));
  assert.deepEqual(soakFailures(figures), [], `${figures.problems.join("\n")}\n(seed ${seed}: TAPEDECK_SOAK_SEED=${seed} runs it again)`);
  for (const [kind, count] of Object.entries(options.strikes))
    assert.equal(figures.struck[kind as keyof typeof figures.struck], count, `every ${kind} planned happened`);
  assert.equal(figures.completed, options.runs);
}

void describe("crash soak, short: SQLite", () => {
  void it("30 runs × 12 calls, the server SIGKILLed 6 times and the worker 2: nothing lost, stranded or duplicated", async () => {
    await soak({ label: "SQLite", nodes: 1, runs: 30, calls: 12, seed, strikes: { "kill-node": 6, "kill-worker": 2 }, settleMs: 120_000 });
  });
});

describeWithPostgres("crash soak, short: PostgreSQL", (url) => {
  void it("3 nodes, 30 runs × 12 calls, nodes SIGKILLed 4 times, a worker once, the database restarted once and down 3 s once, lease 3 s", async () => {
    await soak({
      label: "PostgreSQL",
      postgresUrl: url,
      nodes: 3,
      runs: 30,
      calls: 12,
      seed: seed + 1,
      leaseMs: 3_000,
      outageMs: 3_000,
      strikes: { "kill-node": 4, "kill-worker": 1, "restart-db": 1, "db-outage": 1 },
      settleMs: 120_000,
    });
  });
});
