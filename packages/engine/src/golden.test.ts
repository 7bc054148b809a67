import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { JournalEntry } from "@tapedeck/protocol";
import { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { InProcessHostTools } from "./sources/in-process-host-tools.js";
import { SqliteStore } from "./store/sqlite-store.js";
import type { SandboxFactory } from "./sandbox/sandbox.js";
import { storeWithGolden, type GoldenJournal } from "./test-support/golden.js";
import { testSandboxes } from "./test-support/engines.js";

/**
 * Golden journals recorded by earlier releases must replay to the same end, sending nothing.
 * A tampered journal must fail loudly, never replay quietly; a journal a newer engine wrote
 * (`golden/newer-engine/`) is refused, and its run left for that engine.
 */
after(() => testSandboxes().close());

const DIR = fileURLToPath(new URL("../golden/", import.meta.url));
const goldens = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .map((f) => ({ file: f, golden: JSON.parse(readFileSync(DIR + f, "utf8")) as GoldenJournal }));
const sandboxes: SandboxFactory = { create: (o) => testSandboxes().create(o), close: () => Promise.resolve() };

async function verify(golden: GoldenJournal) {
  const engine = await Engine.open({ store: await storeWithGolden(golden), sandboxes });
  try {
    return await engine.verify(golden.run.id);
  } finally {
    await engine.close();
  }
}

function tamper(golden: GoldenJournal, change: (journal: JournalEntry[]) => JournalEntry[]): GoldenJournal {
  return { ...golden, journal: change(structuredClone([...golden.journal])) };
}

describe("golden journals", () => {
  it("there are golden journals to replay", () => {
    assert.ok(goldens.length >= 3);
  });

  for (const { file, golden } of goldens) {
    it(`${file} replays to its recorded end`, async () => {
      const result = await verify(golden);
      assert.ok(result.ok, result.ok ? "" : result.problem);
      assert.ok(result.end, "the golden run ended");
    });
  }

  const first = goldens.find((g) => g.file.includes("sequential-date-random-logs"));
  it("a changed result fails loudly", async () => {
    const golden = tamper(first!.golden, (journal) =>
      journal.map((e) => (e.kind === "call.completed" && e.seq === 1 ? { ...e, result: { k: "a", v: 99 } } : e)),
    );
    const result = await verify(golden);
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.problem, /ends differently|diverged/);
  });

  it("changed arguments fail loudly with a divergence naming the call", async () => {
    const golden = tamper(first!.golden, (journal) => journal.map((e) => (e.kind === "call.scheduled" && e.seq === 2 ? { ...e, args: { k: "zz" } } : e)));
    const result = await verify(golden);
    assert.equal(result.ok, false);
    if (!result.ok)
      assert.match(result.problem, /Replay diverged at call #2: the journal recorded kv\.get\(\{"k":"zz"\}\) but the script now calls kv\.get\(\{"k":"bb"\}\)/);
  });

  it("a removed entry fails loudly", async () => {
    const golden = tamper(first!.golden, (journal) => journal.filter((e) => e.index !== 2).map((e, index) => ({ ...e, index })));
    const result = await verify(golden);
    assert.equal(result.ok, false);
  });

  const newer = JSON.parse(readFileSync(`${DIR}newer-engine/v2-sequential-date-random-logs.json`, "utf8")) as GoldenJournal;
  const newerMessage =
    /The journal of run \S+ was written by a newer engine \(replay version 2; this engine replays versions up to 1\), so it was not replayed/;

  it("a journal written by a newer engine is refused by verify, with an error that says so", async () => {
    assert.equal(newer.journal[0]?.kind === "run.started" && newer.journal[0].replayVersion, 2);
    const result = await verify(newer);
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.problem, newerMessage);
  });

  it("a run whose journal a newer engine wrote is not resumed: its end rejects, and the run is left as it was", async () => {
    const store = SqliteStore.open({ path: ":memory:", durability: "off" });
    await store.putToolset(newer.toolset);
    // Left running by the newer engine, before its end: resuming it here would replay it.
    const journal = newer.journal.slice(0, -1);
    await store.createRun({ ...newer.run, toolsetId: newer.toolset.id, status: "running" }, journal);
    const sendNothing = () => Promise.reject(new Error("a refused journal sends nothing"));
    const kv = { get: sendNothing, put: sendNothing };
    const engine = await Engine.open({ store, sandboxes, sources: { host: new InProcessHostTools({ kv }) }, wake: false });
    try {
      const [resumed] = await engine.resume(newer.run.id);
      await assert.rejects(resumed!.end, (error: unknown) => EngineError.is(error) && error.code === "misconfigured" && newerMessage.test(error.message));
      const run = await engine.getRun(newer.run.id);
      assert.equal(run.status, "running");
      assert.equal(run.hostFaults, undefined, "not counted as a fault of the host: counting it would fail a run the newer engine can go on with");
      assert.deepEqual(await engine.journal(newer.run.id), journal);
    } finally {
      await engine.close();
    }
  });

  it("a renumbered entry fails loudly as a corrupt journal", async () => {
    const golden = tamper(first!.golden, (journal) => journal.map((e) => (e.index === 3 ? { ...e, index: 7 } : e)));
    await assert.rejects(verify(golden));
  });
});
