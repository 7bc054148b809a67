import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { JournalEntry } from "@tapedeck/protocol";
import { Engine } from "./engine.js";
import type { SandboxFactory } from "./sandbox/sandbox.js";
import { storeWithGolden, type GoldenJournal } from "./test-support/golden.js";
import { testSandboxes } from "./test-support/engines.js";

/**
 * Golden journals recorded by earlier releases must replay to the same end, sending nothing.
 * A tampered journal must fail loudly, never replay quietly.
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

  it("a renumbered entry fails loudly as a corrupt journal", async () => {
    const golden = tamper(first!.golden, (journal) => journal.map((e) => (e.index === 3 ? { ...e, index: 7 } : e)));
    await assert.rejects(verify(golden));
  });
});
