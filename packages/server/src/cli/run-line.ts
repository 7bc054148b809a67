import type { RunWait } from "@tapedeck/protocol";
import { describeWait } from "./print-waits.js";

/** What a run's line in `tapedeck runs` shows, from the engine's record or the API's run. */
export interface RunLineFields {
  readonly id: string;
  readonly status: string;
  readonly createdAt: number;
  readonly journalLength: number;
  readonly toolset: string;
  readonly waits?: readonly RunWait[] | undefined;
}

/** A run's line in `tapedeck runs` and `tapedeck runs --watch`: id, status, start, entries, toolset, and what a waiting run waits for. */
export function runLine(run: RunLineFields): string {
  const waits = run.status === "waiting" && run.waits?.length ? `  ${run.waits.map(describeWait).join("; ")}` : "";
  return `${run.id}  ${run.status.padEnd(9)}  ${new Date(run.createdAt).toISOString()}  ${String(run.journalLength).padStart(6)} entries  ${run.toolset.slice(0, 15)}…${waits}`;
}
