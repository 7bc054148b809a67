import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Engine, SqliteStore } from "@tapedeck/engine";
import type { JournalEntry } from "@tapedeck/protocol";
import { ExpirySweeper } from "./expiry-sweeper.js";

/**
 * The sweeper against a real engine, swept at a chosen time: runs past their TTL that have not
 * ended are cancelled with a reason that says so; the others are left as they are.
 */
describe("ExpirySweeper", () => {
  it("cancels the waiting runs whose ttl passed, and nothing else", async () => {
    const engine = await Engine.open({ store: SqliteStore.open({ path: ":memory:", durability: "off" }), wake: false });
    const lines: string[] = [];
    const sweeper = new ExpirySweeper({ engine: () => engine, log: (line) => lines.push(line) });
    try {
      const { id: toolset } = await engine.registerToolset({});
      const start = async (source: string, ttlMs?: number): Promise<string> => {
        const started = await engine.start({ toolset, source, ...(ttlMs === undefined ? {} : { ttlMs }) });
        assert.equal(started.kind, "started");
        if (started.kind !== "started") return "";
        await engine.settled(started.runId);
        return started.runId;
      };
      const waiting = `export default async () => signal("go");`;
      const expired = await start(waiting, 1_000);
      const later = await start(waiting, 3_600_000);
      const never = await start(waiting);
      const ended = await start(`export default () => 1;`, 1_000);
      const now = Date.now() + 60_000;

      assert.deepEqual(await sweeper.sweep(now), [expired]);
      const run = await engine.getRun(expired);
      assert.equal(run.status, "cancelled");
      const [last] = await engine.journal(expired, run.journalLength - 1);
      assert.deepEqual(last && pick(last), { kind: "run.cancelled", reason: "expired: its ttl of 1s passed" });
      assert.deepEqual(await Promise.all([later, never, ended].map(async (id) => (await engine.getRun(id)).status)), ["waiting", "waiting", "completed"]);

      assert.deepEqual(await sweeper.sweep(now), [], "a second sweep finds nothing");
      assert.deepEqual(await sweeper.sweep(now + 3_600_000), [later]);
      assert.equal((await engine.getRun(never)).status, "waiting");
      assert.deepEqual(await new ExpirySweeper({ engine: () => undefined, log: () => {} }).sweep(now + 3_600_000), [], "no engine yet: nothing to sweep");
      assert.deepEqual(lines, []);
    } finally {
      await sweeper.stop();
      await engine.close();
    }
  });
});

function pick(entry: JournalEntry): { kind: string; reason?: string } {
  return entry.kind === "run.cancelled" ? { kind: entry.kind, reason: entry.reason } : { kind: entry.kind };
}
