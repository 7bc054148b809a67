import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { describe, it } from "node:test";
import type { HealthStatus } from "@tapedeck/protocol/api";
import { describeWithPostgres } from "@tapedeck/engine/testing";
import { startPgNodes, untilRun } from "./test-support/pg-nodes.js";
import { startTcpProxy } from "./test-support/tcp-proxy.js";

/**
 * A node whose database cannot be reached says so: `GET /health` (and `/ready`) answer 503 with
 * `unavailable` and the store's problem, and the API takes no work; once the database answers
 * again, so does the node. The database is cut by a TCP proxy on loopback between the node and
 * PostgreSQL (the node's store URL points at the proxy). Needs TAPEDECK_TEST_POSTGRES_URL.
 */
async function health(base: string): Promise<{ code: number; body: HealthStatus }> {
  const response = await fetch(`${base}/health`);
  return { code: response.status, body: (await response.json()) as HealthStatus };
}

/** Asks `/health` every 100 ms until `holds`; fails with the last answer after 30 s. */
async function untilHealth(base: string, what: string, holds: (code: number) => boolean): Promise<HealthStatus> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { code, body } = await health(base);
    if (holds(code)) return body;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}: /health answered ${code} ${JSON.stringify(body)}`);
    await delay(100);
  }
}

describeWithPostgres("a node that cannot reach its PostgreSQL store", (url) => {
  void describe("GET /health", () => {
    void it("answers 503 naming the store's problem while the database is cut off, the API takes no work meanwhile, and both recover when it is back", async () => {
      const direct = new URL(url);
      const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port) });
      const proxied = new URL(url);
      proxied.port = String(proxy.port);
      const pair = await startPgNodes(proxied.toString(), 1);
      try {
        const node = pair.nodes[0]!;
        const td = node.client(pair.adminKey);
        const toolset = (await td.toolsets.create({ hostTools: {} })).id;
        assert.deepEqual(await health(node.url), { code: 200, body: { status: "ok" } });

        await proxy.cut();
        const down = await untilHealth(node.url, "/health to say the store is unreachable", (code) => code === 503);
        assert.equal(down.status, "unavailable");
        assert.match(down.problem ?? "", /PostgreSQL store .* cannot be reached/);
        assert.ok(!(down.problem ?? "").includes(direct.password), "the store URL's password is never shown");
        const refused = await fetch(`${node.url}/v1/runs`, { headers: { authorization: `Bearer ${pair.adminKey}` } });
        assert.equal(refused.status, 503);
        assert.match(await refused.text(), /takes no work while the PostgreSQL store/);

        await proxy.restore();
        assert.deepEqual(await untilHealth(node.url, "/health to recover", (code) => code === 200), { status: "ok" });
        const started = await td.runs.start({ toolset, source: `export default async () => await signal("go");` });
        const run = started.kind === "started" ? started.run : assert.fail("the script type-checks");
        await untilRun(td, run.id, "the run to wait for its signal", (r) => r.status === "waiting");
        await td.runs.signal(run.id, { name: "go", payload: "back" });
        const done = await untilRun(td, run.id, "the run's end", (r) => r.status === "completed");
        assert.equal(done.output, "back");
        assert.match(node.stderr(), /this node takes no work/);
        assert.match(node.stderr(), /the store answers again/);
      } finally {
        await proxy.restore();
        await pair.close();
        await proxy.close();
      }
    });
  });
});
