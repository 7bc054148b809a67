import type { JsonValue } from "@tapedeck/protocol";
import type { ReplayStep, Sandbox, Step } from "../sandbox/sandbox.js";
import { canonicalJson, canonicalValue } from "../util/canonical-json.js";
import type { History } from "./history.js";

/**
 * Replay: runs a script in a fresh sandbox against what its journal recorded, and checks that
 * it does the same thing again. Every recorded outcome is delivered in journal order, in one
 * round trip to the sandbox; then what the script issued is compared, call by call, with what
 * was recorded. A tool's `sensitiveParams` are journaled as keyed hashes: the script's arguments
 * are compared in that form (a changed secret diverges, the same one does not), and their live
 * form is handed back (`live`), for the open calls to be sent with.
 */

/** What the journal records of a call's arguments (its tool's sensitive values hashed). */
export type RecordedArgs = (tool: string, args: JsonValue) => JsonValue;

export type ReplayResult =
  /** The script did what the journal says; `fresh` is what it did beyond it (the live part). */
  | {
      readonly ok: true;
      readonly fresh: Step;
      /** The live arguments of the recorded calls whose journaled arguments are redacted, by seq. */
      readonly live: ReadonlyMap<number, JsonValue>;
    }
  /** The script did something else: the message names the seq, the recorded call and the new one. */
  | { readonly ok: false; readonly divergence: string };

export async function replayHistory(sandbox: Sandbox, history: History, recordedArgs: RecordedArgs = (_tool, args) => args): Promise<ReplayResult> {
  const first = await sandbox.start();
  const replayed = history.deliveries.length > 0 && !first.end ? await sandbox.replay(history.deliveries) : undefined;
  const live = new Map<number, JsonValue>();
  const divergence = findDivergence(history, first, replayed, recordedArgs, live);
  if (divergence) return { ok: false, divergence };
  const step = mergeSteps(first, replayed);
  return {
    ok: true,
    live,
    fresh: {
      calls: step.calls.filter((call) => !history.calls.has(call.seq)),
      logs: step.logs.filter((log) => log.ordinal >= history.logCount),
      ...(step.end ? { end: step.end } : {}),
    },
  };
}

function mergeSteps(first: Step, replayed: ReplayStep | undefined): Step {
  if (!replayed) return first;
  const end = first.end ?? replayed.end;
  return { calls: [...first.calls, ...replayed.calls], logs: [...first.logs, ...replayed.logs], ...(end ? { end } : {}) };
}

/** Compares what the script did on replay with what the journal recorded. */
function findDivergence(
  history: History,
  first: Step,
  replayed: ReplayStep | undefined,
  recordedArgs: RecordedArgs,
  live: Map<number, JsonValue>,
): string | undefined {
  const issued = [...first.calls, ...(replayed?.calls ?? [])];
  for (const call of issued) {
    const recorded = history.calls.get(call.seq);
    if (!recorded) continue;
    const args = canonicalValue(call.args);
    // Compared (and quoted) as the journal has it: a sensitive value never reaches the message.
    const shown = recorded.tool === call.tool ? recordedArgs(call.tool, args) : args;
    if (recorded.tool !== call.tool || canonicalJson(recorded.args) !== canonicalJson(shown)) {
      return divergenceMessage(
        call.seq,
        `the journal recorded ${describeCall(recorded.tool, recorded.args)} but the script now calls ${describeCall(call.tool, recordedArgs(call.tool, args))}`,
      );
    }
    if (shown !== args) live.set(call.seq, args);
  }
  if (replayed?.stalledAt !== undefined) {
    const recorded = history.calls.get(replayed.stalledAt);
    const what = recorded ? describeCall(recorded.tool, recorded.args) : "a call";
    return divergenceMessage(
      replayed.stalledAt,
      `the journal recorded ${what}, but the script now ends up waiting without making it (it made ${issued.length} calls)`,
    );
  }
  const end = first.end ?? replayed?.end;
  // Stopped by a limit or by QuickJS failing, the script ends as it would have live: that end is
  // what the run gets, not a divergence (the recorded outcomes it did not reach stay unread).
  const stopped = end !== undefined && !end.ok && (end.error.kind === "limit" || end.error.kind === "crash");
  if (end && !stopped) {
    const delivered = replayed?.delivered ?? 0;
    const missing = [...history.calls.values()].find((c) => c.seq > issued.length);
    if (missing)
      return divergenceMessage(missing.seq, `the journal recorded ${describeCall(missing.tool, missing.args)}, but the script now ends before making it`);
    if (delivered < history.deliveries.length) {
      const next = history.deliveries[delivered]!;
      return divergenceMessage(next.seq, `the journal recorded an outcome for this call that the script now ends before receiving`);
    }
  }
  return undefined;
}

function divergenceMessage(seq: number, detail: string): string {
  return `Replay diverged at call #${seq}: ${detail}. A run's script must make the same calls in the same order every time it is replayed (no randomness or time outside Math.random and Date). To change a run's code, fork it (retry_run) instead.`;
}

function describeCall(tool: string, args: JsonValue): string {
  const text = canonicalJson(args);
  return `${tool}(${text.length > 200 ? `${text.slice(0, 200)}…` : text})`;
}
