import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Engine, InProcessHostTools, SqliteStore } from "@tapedeck/engine";
import { cli } from "./cli.js";
import { capture, withDir } from "./test-support/in-process.js";

/**
 * `tapedeck runs` over a data folder holding runs no engine would write (a hand-edited or
 * damaged database): each is listed as damaged, with its id and what is wrong, and the others
 * are listed as usual; the command succeeds.
 */
const SLEEPING = `export default async () => { await sleep("1h"); return 1; };`;

describe("tapedeck runs with a damaged run", () => {
  it("a forged wake time of 1e300 or a status no run has shows that run as damaged and lists the others", async () => {
    await withDir(async (dir) => {
      const engine = await Engine.open({ store: dir, wake: false, sources: { host: new InProcessHostTools({ probe: { echo: (args: never) => args } }) } });
      const { id: toolset } = await engine.registerToolset({ hostTools: { probe: { echo: {} } } });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const started = await engine.start({ toolset, source: SLEEPING });
        assert.equal(started.kind, "started");
        if (started.kind !== "started") return;
        assert.equal((await engine.settled(started.runId))?.status, "waiting");
        ids.push(started.runId);
      }
      await engine.close();
      const [forgedWake, forgedStatus, forgedCreation] = ids as [string, string, string, string];
      const store = SqliteStore.open({ path: join(dir, "tapedeck.db") });
      const now = Date.now();
      await store.append(forgedWake, [], { updatedAt: now, wakeAt: 1e300, waits: [{ kind: "sleep", seq: 1, until: 1e300 }] });
      await store.append(forgedStatus, [], { updatedAt: now, status: "zombie" as never });
      await store.append(forgedCreation, [], { updatedAt: -1e300 });
      await store.close();

      const io = capture();
      assert.equal(await cli(["runs", "--data", dir], io), 0, io.err.join("\n"));
      const line = (id: string) => io.out.find((l) => l.startsWith(id)) ?? assert.fail(`${id} is not listed:\n${io.out.join("\n")}`);
      assert.match(line(forgedWake), /^run_\S+ {2}damaged {4}its wake time 1e\+300 is not a time; the data folder's other runs are listed as usual$/);
      assert.match(line(forgedStatus), /damaged {4}its status "zombie" is not one a run has/);
      assert.match(line(forgedCreation), /damaged {4}its update time -1e\+300 is not a time/);
      assert.match(line(ids[3]!), /^run_\S+ {2}waiting {4}\d{4}-.* sleep until \d{4}-/, "the intact run is listed as usual");
      assert.equal(io.out.length, 4);
    });
  });
});
