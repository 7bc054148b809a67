import assert from "node:assert/strict";
import { it } from "node:test";
import { describeWithPostgres } from "@tapedeck/engine/testing";
import { SCHEDULE_RUN_LABEL } from "@tapedeck/sdk";
import type { ServeChild } from "./test-support/serve-child.js";
import { startPgNodes } from "./test-support/pg-nodes.js";

/**
 * Two `tapedeck serve` nodes on one PostgreSQL fire one schedule (every second, on the real
 * clock: what is waited for is each node's log line saying it fired, no sleep); one node is
 * killed (SIGKILL) across fire times and the other goes on firing. Each fire time starts at most
 * one run (one run per idempotency key, and no run of two fires), each started fire's run is
 * listed under the schedule, and both nodes fired (the claim is shared, not one node's).
 * The exactly-once proof on a manual clock is the engine's `schedules-nodes.test.ts`.
 * Needs TAPEDECK_TEST_POSTGRES_URL.
 */
const SOURCE = `export default async () => 1;`;
/** Fires of one node before the other's first that fail the test (rather than wait for ever): both race for each time. */
const MAX_ONE_SIDED = 30;

/** Resolves with the `n`-th "schedule fired … started" line of this schedule a node logs (counting from 1), parsed. */
async function nthFire(node: ServeChild, scheduleId: string, n: number): Promise<{ fireAt: string; runId: string }> {
  let seen = 0;
  const line = await node.stderrLine(
    (text) => text.includes('"schedule fired"') && text.includes(`"${scheduleId}"`) && text.includes('"state":"started"') && ++seen === n,
  );
  return JSON.parse(line) as { fireAt: string; runId: string };
}

describeWithPostgres("schedules on two tapedeck serve nodes on one PostgreSQL", (url) => {
  it("both nodes fire one schedule, one is killed across fire times, the other goes on: one run per fire time", async () => {
    const cluster = await startPgNodes(url, 2);
    try {
      const [a, b] = cluster.nodes as [ServeChild, ServeChild];
      const td = a.client(cluster.adminKey);
      const toolset = (await td.toolsets.create({})).id;
      const schedule = await td.schedules.create({ toolset, source: SOURCE, every: "1s", overlap: "allow", labels: { job: "tick" } });
      // Both nodes have fired it at least once (the store decides which node claims each time).
      const tooMany = (node: ServeChild, name: string): Promise<never> =>
        nthFire(node, schedule.id, MAX_ONE_SIDED).then(() => assert.fail(`node ${name} fired ${MAX_ONE_SIDED} times before the other fired once`));
      const firstOfEach = await Promise.race([Promise.all([nthFire(a, schedule.id, 1), nthFire(b, schedule.id, 1)]), tooMany(a, "A"), tooMany(b, "B")]);
      assert.notEqual(firstOfEach[0].fireAt, firstOfEach[1].fireAt, "two nodes never start the same fire");
      await a.kill();
      const killedAt = Date.now();
      // B alone fires the next times: wait for three it fires after the kill.
      let after = 0;
      for (let n = 1; after < 3; n++) if (Date.parse((await nthFire(b, schedule.id, n)).fireAt) > killedAt) after++;
      const tdB = b.client(cluster.adminKey);
      await tdB.schedules.pause(schedule.id);

      const fires = await tdB.schedules.fires(schedule.id, { limit: 500 });
      const started = fires.filter((fire) => fire.state === "started");
      assert.ok(started.length >= 5, JSON.stringify(fires));
      assert.equal(new Set(started.map((fire) => fire.fireAt)).size, started.length);
      assert.equal(new Set(started.map((fire) => fire.runId)).size, started.length, "no run serves two fires");
      const runs = await tdB.schedules.runs(schedule.id, { limit: 500 });
      const listed = new Set(runs.map((run) => run.id));
      assert.ok(
        started.every((fire) => listed.has(fire.runId!)),
        "every started fire's run is listed under its schedule",
      );
      assert.ok(runs.every((run) => run.labels[SCHEDULE_RUN_LABEL] === schedule.id && run.labels.job === "tick"));
      // At most one run per fire time: no more runs than fire rows (a fire claimed by A as it died may have its run without its row saying so yet).
      assert.ok(runs.length <= fires.length, `${runs.length} runs, ${fires.length} fires`);
    } finally {
      await cluster.close();
    }
  });
});
