import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createKey, startServeChild } from "./test-support/serve-child.js";

/**
 * A server stops as soon as what it holds is answered: a long poll held when it is told to stop
 * is answered at once, on a connection the answer closes, so no keep-alive connection that
 * becomes idle after the stop began can hold the process for its timeout.
 */
describe("stopping the server", () => {
  it("answers a held worker poll at once and closes its connection, so the process exits", async () => {
    const server = await startServeChild();
    try {
      const key = await createKey(server.dataDir);
      const held = fetch(`${server.url}/v1/tasks/poll`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ tools: ["shop.price"], waitMs: 30_000 }),
      });
      // The server logs a worker as connected when its first poll arrives: the poll is held then.
      await server.stderrLine((line) => line.includes("worker connected"));
      const stopped = server.stop();
      const answer = await held;
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { tasks: [] });
      assert.equal(answer.headers.get("connection"), "close", "the answer closes its keep-alive connection");
      assert.equal(await stopped, 0);
    } finally {
      server.cleanup();
    }
  });
});
