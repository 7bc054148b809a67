import type { JournalEntry, PinnedToolset } from "@tapedeck/protocol";
import type { NewRun } from "../store/store.js";
import { SqliteStore } from "../store/sqlite-store.js";

/**
 * A golden journal: a real run, recorded once and committed, that every later release must
 * replay to the same end (`Engine.verify`). It pins the JavaScript the run executed, not just
 * its TypeScript, because that is what a stored run replays.
 */
export interface GoldenJournal {
  readonly description: string;
  readonly replayVersion: number;
  readonly toolset: PinnedToolset;
  readonly run: Pick<NewRun, "id" | "source" | "js" | "sourceMap" | "input" | "createdAt">;
  readonly journal: readonly JournalEntry[];
}

/** An in-memory store holding the golden run, ready for `Engine.verify(golden.run.id)`. */
export async function storeWithGolden(golden: GoldenJournal): Promise<SqliteStore> {
  const store = SqliteStore.open({ path: ":memory:", durability: "off" });
  await store.putToolset(golden.toolset);
  await store.createRun({ ...golden.run, toolsetId: golden.toolset.id, status: "completed" }, golden.journal);
  return store;
}
