import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Tapedeck, type WorkerProblem } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { untilRun } from "./test-support/pg-nodes.js";

/**
 * An SDK worker given several node URLs (`nodes`) moves on to the next node when one is down,
 * at once, instead of pausing: here its client's own URL is a port nothing listens on, and the
 * other URL a real `tapedeck serve`, whose run's call it serves.
 */
const TOOLSET = { hostTools: { shop: { price: { description: "A price.", inputSchema: { type: "object" } } } } };

let server: ServeChild;
let deadUrl: string;

before(async () => {
  server = await startServeChild();
  // A port that was free a moment ago and has nothing listening now: connecting is refused.
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  probe.close();
  await once(probe, "close");
});

after(async () => {
  await server.stop();
  server.cleanup();
});

describe("a worker given several nodes", () => {
  it("polls the next node at once when its first is down, serves the call there, and never pauses while one node answers", async () => {
    const admin = server.client(server.adminKey!);
    const toolset = (await admin.toolsets.create(TOOLSET)).id;
    const problems: WorkerProblem[] = [];
    const worker = new Tapedeck({ baseUrl: deadUrl, apiKey: server.adminKey! })
      .worker({ nodes: [server.url], tools: { shop: { price: () => ({ cents: 250 }) } }, onError: (_error, problem) => problems.push(problem) })
      .start();
    try {
      const started = await admin.runs.start({ toolset, source: `import { shop } from "tapedeck:tools";\nexport default async () => await shop.price({});` });
      const run = started.kind === "started" ? started.run : assert.fail("the script type-checks");
      const done = await untilRun(
        admin,
        run.id,
        "the run's call to be served through the second node",
        (r) => r.status !== "running" && r.status !== "waiting",
      );
      assert.deepEqual([done.status, done.output], ["completed", { cents: 250 }]);
      const polls = problems.flatMap((p) => (p.kind === "poll_failed" ? [p] : []));
      assert.ok(polls.length > 0, "the down node was tried, and said so");
      assert.deepEqual(
        polls.filter((p) => p.retryInMs !== 0),
        [],
        "no pause: the other node answered each time",
      );
      assert.match(polls[0]!.message, /^polling one of the worker's 2 nodes for calls failed: .* Polling the next node at once\.$/);
    } finally {
      await worker.stop();
    }
    assert.throws(() => admin.worker({ nodes: ["127.0.0.1:7701"], tools: { shop: { price: () => 1 } } }), /nodes must be http\(s\) URLs/);
  });
});
