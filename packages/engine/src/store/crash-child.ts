/**
 * Test helper, not API: `sqlite-store.test.ts` spawns this script and SIGKILLs it mid-write.
 *
 * Usage: node crash-child.js <database file>
 * Creates CRASH_RUNS runs, then appends to each of them forever, concurrently (so appends share
 * batches). Right after an append's promise resolves it prints `<run id> <index>`: each line
 * printed is a promise that the entry is durable.
 */
import { pathToFileURL } from "node:url";
import type { JournalEntry } from "@tapedeck/protocol";
import { SqliteStore } from "./sqlite-store.js";

export const CRASH_RUNS = 4;

export function crashEntry(index: number): JournalEntry {
  return { index, at: index, kind: "log", level: "info", message: `entry ${index} `.padEnd(300, "x") };
}

async function appendForever(store: SqliteStore, runId: string): Promise<never> {
  for (let index = 1; ; index++) {
    await store.append(runId, [crashEntry(index)]);
    // A pipe write is synchronous on Linux: the line leaves before the next append starts.
    process.stdout.write(`${runId} ${index}\n`);
  }
}

async function main(path: string): Promise<void> {
  const store = SqliteStore.open({ path, durability: "full" });
  const ids = Array.from({ length: CRASH_RUNS }, (_, i) => `crash_${i}`);
  const run = { toolsetId: "ts_x", source: "", js: "", sourceMap: "", input: null, status: "running", createdAt: 0 } as const;
  await Promise.all(ids.map((id) => store.createRun({ ...run, id }, [crashEntry(0)])));
  await Promise.all(ids.map((id) => appendForever(store, id)));
}

// Imported by the test for its constants; runs only when spawned as a script.
if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const path = process.argv[2];
  if (path === undefined) throw new Error("usage: node crash-child.js <database file>");
  await main(path);
}
