import type { JournalEntry, JsonValue, RunEnd, ToolFailure } from "@tapedeck/protocol";
import { SandboxStoppedError, type SandboxFactory, type SandboxLimits } from "../sandbox/sandbox.js";
import type { RunRecord } from "../store/store.js";
import { canonicalJson } from "../util/canonical-json.js";
import { readHistory, type History } from "./history.js";
import { replayHistory } from "./replay.js";
import { guestErrorToRunError, type DeliveredFailure } from "./run-error.js";
import type { LoadedToolset } from "../toolset/loaded-toolset.js";
import { endOf } from "./run-executor.js";
import { endedByTheEngine } from "./host-faults.js";

/**
 * Replays a run's whole journal in a fresh sandbox and checks that the script does exactly what
 * was recorded, without sending a call or writing anything. It is how golden journals pin
 * replay behaviour across releases, and how an operator checks that runs still replay before an
 * upgrade.
 */
export type VerifyResult =
  /** The journal replays; `end` is how the replayed script ended (absent for a run that has not ended). */
  | { readonly ok: true; readonly end?: RunEnd }
  /** It does not: what differs, in words. */
  | { readonly ok: false; readonly problem: string };

export async function verifyReplay(
  run: RunRecord,
  toolset: Pick<LoadedToolset, "groups" | "features" | "workflows"> & Partial<Pick<LoadedToolset, "byPath" | "sensitive">>,
  entries: readonly JournalEntry[],
  sandboxes: SandboxFactory,
  limits: SandboxLimits,
): Promise<VerifyResult> {
  let history;
  try {
    history = readHistory(run.id, entries);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  const sandbox = await sandboxes.create({
    runId: run.id,
    js: run.js,
    filename: "script.js",
    tools: toolset.groups,
    features: toolset.features,
    workflows: Object.keys(toolset.workflows),
    input: history.input,
    seed: run.id,
    startedAt: history.startedAt,
    limits,
  });
  try {
    // Sensitive values are compared as the journal has them (hashed with the engine's key).
    const recordedArgs = (tool: string, args: JsonValue) => toolset.sensitive?.redact(toolset.byPath?.get(tool), args) ?? args;
    const replayed = await replayHistory(sandbox, history, recordedArgs).catch((error: unknown) => {
      // Stuck again where the live run was stuck: the watchdog's limit error is how it ends.
      if (error instanceof SandboxStoppedError)
        return { ok: true as const, live: new Map<number, JsonValue>(), fresh: { calls: [], logs: [], end: { ok: false as const, error: error.error } } };
      throw error;
    });
    if (!replayed.ok) return { ok: false, problem: replayed.divergence };
    const { fresh } = replayed;
    const [call] = fresh.calls;
    if (!history.end) return { ok: true };
    const recorded: RunEnd = endOf(history.end);
    // Ended from outside the script (cancelled, or failed by the engine after faults of the host):
    // every recorded call replayed; where the script would have gone next was never journaled.
    if (endedFromOutside(recorded)) return { ok: true, end: recorded };
    if (call) return { ok: false, problem: `the script makes call #${call.seq} ${call.tool}, which the journal does not have` };
    if (fresh.logs.length > 0) return { ok: false, problem: `the script logs ${fresh.logs.length} more lines than the journal has` };
    if (!fresh.end) return { ok: false, problem: "the journal says the run ended, but the replayed script waits for more" };
    const end: RunEnd = fresh.end.ok
      ? { status: "completed", output: fresh.end.output }
      : { status: "failed", error: guestErrorToRunError(fresh.end.error, run, deliveredFailures(history)) };
    const same =
      end.status === "completed" && recorded.status === "completed"
        ? comparableJson(end.output) === comparableJson(recorded.output)
        : end.status === "failed" && recorded.status === "failed" && end.error.message === recorded.error.message;
    if (!same) return { ok: false, problem: `the replayed script ends differently: recorded ${describe(recorded)}, replayed ${describe(end)}` };
    return { ok: true, end };
  } finally {
    await sandbox.dispose();
  }
}

/**
 * A run the script did not end: cancelled, or failed by the engine while it waited
 * (`endedByTheEngine`), or at the call or result past its budget (`run-budget.ts`: the replayed
 * script goes on to the call the engine refused to send).
 */
function endedFromOutside(end: RunEnd): boolean {
  return end.status === "cancelled" || (end.status === "failed" && (endedByTheEngine(end.error) || end.error.failure?.code === "budget_exceeded"));
}

function describe(end: RunEnd): string {
  if (end.status === "cancelled") return "cancelled";
  return end.status === "completed" ? `output ${comparableJson(end.output).slice(0, 200)}` : `error "${end.error.message.slice(0, 200)}"`;
}

/** Canonical JSON, or plain JSON for an output canonical JSON cannot write (a lone surrogate). */
function comparableJson(value: JsonValue): string {
  try {
    return canonicalJson(value);
  } catch {
    return JSON.stringify(value);
  }
}

/** The failures the journal delivered, by seq: the only ToolErrors a run's error may report as a call's. */
function deliveredFailures(history: History): (seq: number) => DeliveredFailure | undefined {
  const failures = new Map<number, ToolFailure>();
  for (const delivery of history.deliveries) if (!delivery.ok) failures.set(delivery.seq, delivery.error);
  return (seq) => {
    const failure = failures.get(seq);
    return failure === undefined ? undefined : { tool: history.calls.get(seq)?.tool ?? "", failure };
  };
}
