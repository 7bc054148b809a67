import type { RunError } from "@tapedeck/protocol";
import { EngineError } from "../errors.js";
import { MAX_HOST_FAULTS } from "../limits.js";
import { runError } from "./run-error.js";

/**
 * Host faults: executions of a run that ended in a fault of the host rather than in the run's
 * own end or pause. A run whose script makes the host fail (an input nobody foresaw) would
 * otherwise be a poison pill: resumed at every start of a server, failing it again. Invariants:
 * - they are counted durably: by the store when a `running` run is taken over from an owner
 *   that never released it (the process died under it), and by the engine when executing the
 *   run fails (`countsAsHostFault`), with what the fault was;
 * - they are forgotten when the run makes progress: the first commit of an execution that
 *   takes an outcome, parks or ends clears them (a run a neighbour's crash interrupted goes on as
 *   if nothing happened once its call answers). Re-sending an interrupted call is not progress:
 *   a run that faults the host right after that would otherwise never be counted out;
 * - the crashes among them (takeovers after the holding process died) are forgiven when a later
 *   execution gets the run to where it only waits for answers from outside (replayed, its calls
 *   sent again or still with their workers, its sandbox idle) without faulting: a server killed
 *   or restarted while the run waited on a slow call is no fault of the run, however often it
 *   happens (the soak kills servers every few seconds), while a run that kills its host during
 *   its replay or its next step never gets there and is counted out. What this does not count
 *   out: a call whose answer kills the process (not merely throws) before its outcome commits;
 *   each such crash costs one call round trip, and a `retry` call is sent again with its key.
 *   "Only waits for answers" (`CallIntake.awaitsOnlyAnswers`) means every open call is a wait or
 *   has been handed to its source; not while a source is asked whether it still holds an attempt,
 *   an attempt's entry is written or a kept signal is read, so a run whose next step after one of
 *   those kills the process is counted out like any other;
 * - an execution that begins with `MAX_HOST_FAULTS` counted fails the run at once, before any
 *   of its script runs, with `hostFaultError`: the fault cannot repeat at the next start.
 */

/**
 * Whether an execution's failure is a fault of the host to count: not the engine closing, nor
 * the run being held elsewhere, nor an engine that cannot execute it (a journal a newer engine
 * wrote: counting it would fail a run another engine can go on with), nor a lost race in the
 * store: another process took the run over (`lease_lost`), wrote first (`store_conflict`), or the
 * database gave the write up as crossed by others (`store_busy`: tried again later).
 */
export function countsAsHostFault(error: unknown): boolean {
  if (EngineError.is(error)) return !(error.code === "closed" || error.code === "conflict" || error.code === "misconfigured");
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return !(code === "lease_lost" || code === "store_conflict" || code === "store_busy");
}

/** What the fault was, in a line. */
export function describeFault(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** Whether a run with these faults counted must be failed rather than executed again. */
export function tooManyHostFaults(faults: { readonly count: number } | undefined): boolean {
  return faults !== undefined && faults.count >= MAX_HOST_FAULTS;
}

/** How the errors of runs the engine ended from outside their script begin (`endedByTheEngine`). */
const HOST_FAULTS_END = "Executing this run made Tapedeck fail ";
export const SANDBOX_LOST_END = "The sandbox running this script was lost ";

/**
 * Whether a run's error is an end the engine imposed while the script waited (too many faults of
 * the host, its sandbox lost too often), not one the script reached: `verify` does not ask the
 * replay to reach it. A sandbox that crashed under the script (also `internal`) is the script's own end.
 */
export function endedByTheEngine(error: RunError): boolean {
  return error.kind === "internal" && (error.message.startsWith(HOST_FAULTS_END) || error.message.startsWith(SANDBOX_LOST_END));
}

export function hostFaultError(faults: { readonly count: number; readonly last: string }): RunError {
  return runError(
    "internal",
    `${HOST_FAULTS_END}${faults.count} times in a row without the run making progress (the last time: ${faults.last}). ` +
      "It was failed so that it cannot do so again. Look for what the script does at its last step (the values it passes or returns), change it, and fork the run (retry_run): the calls that completed are reused.",
  );
}
