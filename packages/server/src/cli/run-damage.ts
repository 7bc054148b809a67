import type { RunRecord } from "@tapedeck/engine";
import { RunStatus } from "@tapedeck/protocol";

/**
 * Why a listed run cannot be shown as a run, or undefined when it can. The store lists a row it
 * cannot read as `damaged`; a row it can read may still hold what no run has (a hand-edited or
 * damaged database: a wake time of 1e300, a status no engine writes). `tapedeck runs` shows such
 * a run as damaged, with its id, and lists the others: one bad row never hides the folder.
 */
export function runDamage(run: RunRecord): string | undefined {
  if (run.damaged !== undefined) return run.damaged;
  if (!(Object.values(RunStatus) as string[]).includes(run.status)) return `its status ${JSON.stringify(run.status)} is not one a run has`;
  const times: [string, number | undefined][] = [
    ["creation time", run.createdAt],
    ["update time", run.updatedAt],
    ["wake time", run.wakeAt],
    ...(run.waits ?? []).flatMap((wait): [string, number | undefined][] => ("until" in wait ? [[`${wait.kind} wait's time`, wait.until]] : [])),
  ];
  for (const [what, ms] of times) {
    if (ms !== undefined && !isTime(ms)) return `its ${what} ${String(ms)} is not a time`;
  }
  return undefined;
}

/** A number a `Date` can hold (ECMAScript's range, ±8.64e15 ms). */
function isTime(ms: unknown): boolean {
  return typeof ms === "number" && Number.isFinite(ms) && Math.abs(ms) <= 8.64e15;
}
