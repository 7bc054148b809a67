import type { Decision, JournalEntry, JsonValue, ParkReason, RunError, SubCallAnswer, ToolFailure } from "@tapedeck/protocol";
import { EngineError } from "../errors.js";
import type { Delivery } from "../sandbox/sandbox.js";

/**
 * The version of replay behaviour this engine writes into `run.started`; golden journals pin it.
 * A journal of a higher version was written by a newer engine, whose replay this one does not
 * know: it is refused when read (`readHistory`), never replayed.
 */
export const REPLAY_VERSION = 1;

/** The reason a `call.attempt` gives when the engine stopped (crashed, or was stopped) while the attempt before was in flight. */
export const ENGINE_STOPPED = "the engine stopped while the call was in flight";

/** A call as the journal recorded it. */
export interface RecordedCall {
  readonly seq: number;
  readonly tool: string;
  readonly args: JsonValue;
  /** `call.scheduled` calls were sent; `call.rejected` ones never left the engine. */
  readonly rejected: boolean;
  /** Attempts made so far: 1 + the `call.attempt` entries (since the last approval, which sends it again from 1). */
  readonly attempts: number;
  /** Of them, those made because the engine stopped while the one before was in flight (`ENGINE_STOPPED`). */
  readonly stops: number;
  /** Whether an outcome was recorded. */
  readonly hasOutcome: boolean;
  /** Set while the call is held back, waiting for a decision (cleared by `call.decided`). */
  readonly parked?: { readonly reason: ParkReason; readonly message: string; readonly credential?: string };
  /** The harness's decision on a call that needed approval or was parked. */
  readonly decision?: { readonly decision: Decision; readonly reason?: string };
  /** The harness approved it after it was parked with `tool.schema_changed`: it is sent as it is, not checked again. */
  readonly schemaChangeApproved?: boolean;
  /** Set by a direct tool session for a call its approval policy asked a human for (`direct.asked`): resumed, it waits for its decision. */
  readonly asks?: boolean;
  /** Set while the call waits for a place in its tool's rate-limit window (`call.throttled`, cleared by `call.admitted`): until when. */
  readonly throttledUntil?: number;
  /** The host calls its source made for it (a user tool's `call.sub` entries), by key: a resumed attempt is answered from them. */
  readonly subCalls?: ReadonlyMap<string, SubCallAnswer>;
}

/**
 * What a run's journal says, arranged for replay: the calls by seq, the outcomes in the order
 * they were delivered, how many log lines were written, and how the run ended, if it did.
 */
export interface History {
  readonly startedAt: number;
  readonly input: JsonValue;
  readonly replayVersion: number;
  /** The trace context the run was started in, if it was given one. */
  readonly traceparent?: string;
  readonly calls: ReadonlyMap<number, RecordedCall>;
  readonly deliveries: readonly Delivery[];
  readonly logCount: number;
  readonly end?:
    { readonly ok: true; readonly output: JsonValue } | { readonly ok: false; readonly error: RunError } | { readonly ok: false; readonly cancelled: string };
  readonly length: number;
}

export class JournalCorruptError extends Error {
  readonly code = "journal_corrupt";
  constructor(runId: string, detail: string) {
    super(`The journal of ${runId} is not one this engine wrote: ${detail}. It cannot be replayed.`);
    this.name = "JournalCorruptError";
  }
}

type MutableCall = { -readonly [K in keyof RecordedCall]: RecordedCall[K] } & { subCalls?: Map<string, SubCallAnswer> };

/**
 * Reads a journal; throws `JournalCorruptError` when it breaks the journal's invariants, and an
 * `EngineError` (`misconfigured`) when a newer engine wrote it: the run is left as it is, for
 * that engine to go on with.
 */
export function readHistory(runId: string, entries: readonly JournalEntry[]): History {
  const first = entries[0];
  if (!first || first.kind !== "run.started") throw new JournalCorruptError(runId, "entry 0 is not run.started");
  if (first.replayVersion > REPLAY_VERSION) throw newerJournal(runId, first.replayVersion);
  const calls = new Map<number, MutableCall>();
  const deliveries: Delivery[] = [];
  let logCount = 0;
  let end: History["end"];
  const settle = (seq: number, index: number): void => {
    const call = calls.get(seq);
    if (!call) throw new JournalCorruptError(runId, `entry ${index} settles call #${seq}, which was never issued`);
    if (call.hasOutcome) throw new JournalCorruptError(runId, `entry ${index} settles call #${seq} a second time`);
    call.hasOutcome = true;
  };
  const issue = (seq: number, tool: string, args: JsonValue, rejected: boolean, index: number): MutableCall => {
    if (seq !== calls.size + 1) throw new JournalCorruptError(runId, `entry ${index} issues call #${seq} after call #${calls.size}`);
    const call: MutableCall = { seq, tool, args, rejected, attempts: 1, stops: 0, hasOutcome: false };
    calls.set(seq, call);
    return call;
  };
  entries.forEach((entry, index) => {
    if (entry.index !== index) throw new JournalCorruptError(runId, `entry ${index} is numbered ${entry.index}`);
    if (end) throw new JournalCorruptError(runId, `entry ${index} comes after the run ended`);
    switch (entry.kind) {
      case "run.started":
        if (index !== 0) throw new JournalCorruptError(runId, `entry ${index} starts the run again`);
        break;
      case "call.scheduled":
        issue(entry.seq, entry.tool, entry.args, false, index);
        break;
      case "call.rejected":
        // A rejected call is issued and settled at once: the script gets the failure at this point.
        issue(entry.seq, entry.tool, entry.args, true, index);
        settle(entry.seq, index);
        deliveries.push(failureDelivery(entry.seq, entry.at, entry.error));
        break;
      case "call.attempt": {
        const call = calls.get(entry.seq);
        if (!call || call.hasOutcome) throw new JournalCorruptError(runId, `entry ${index} retries call #${entry.seq}, which is not open`);
        call.attempts = entry.attempt;
        if (entry.reason === ENGINE_STOPPED) call.stops += 1;
        break;
      }
      case "call.parked":
      case "call.decided": {
        const call = calls.get(entry.seq);
        if (!call || call.hasOutcome || call.rejected)
          throw new JournalCorruptError(runId, `entry ${index} (${entry.kind}) names call #${entry.seq}, which is not open`);
        if (entry.kind === "call.parked") {
          call.parked = { reason: entry.reason, message: entry.message, ...(entry.credential === undefined ? {} : { credential: entry.credential }) };
          delete call.decision;
        } else {
          if (call.decision && !call.parked) throw new JournalCorruptError(runId, `entry ${index} decides call #${entry.seq} a second time`);
          call.decision = { decision: entry.decision, ...(entry.reason === undefined ? {} : { reason: entry.reason }) };
          if (entry.decision === "approved" && call.parked?.reason === "tool.schema_changed") call.schemaChangeApproved = true;
          // An approved call is sent again from attempt 1 (`CallIntake.decide`), so the attempts,
          // and the engine's stops among them, count afresh from here, as the live engine counts them.
          if (entry.decision === "approved") {
            call.attempts = 1;
            call.stops = 0;
          }
          delete call.parked;
        }
        break;
      }
      case "call.throttled":
      case "call.admitted": {
        const call = calls.get(entry.seq);
        if (!call || call.hasOutcome || call.rejected || call.decision || call.attempts > 1)
          throw new JournalCorruptError(runId, `entry ${index} (${entry.kind}) names call #${entry.seq}, which is not a call waiting to be sent`);
        if (entry.kind === "call.throttled") call.throttledUntil = entry.until;
        else if (call.throttledUntil === undefined) throw new JournalCorruptError(runId, `entry ${index} admits call #${entry.seq}, which was not throttled`);
        else delete call.throttledUntil;
        break;
      }
      case "call.completed":
        settle(entry.seq, index);
        deliveries.push({ seq: entry.seq, at: entry.at, ok: true, value: entry.result });
        break;
      case "call.failed":
        settle(entry.seq, index);
        deliveries.push(failureDelivery(entry.seq, entry.at, entry.error));
        break;
      case "call.sub": {
        const call = calls.get(entry.seq);
        if (!call || call.hasOutcome || call.rejected)
          throw new JournalCorruptError(runId, `entry ${index} records a host call of call #${entry.seq}, which is not open`);
        (call.subCalls ??= new Map()).set(entry.key, entry.answer);
        break;
      }
      case "log":
        logCount++;
        break;
      case "run.completed":
        end = { ok: true, output: entry.output };
        break;
      case "run.failed":
        end = { ok: false, error: entry.error };
        break;
      case "run.cancelled":
        end = { ok: false, cancelled: entry.reason };
        break;
      case "direct.bound":
      case "direct.call":
      case "direct.asked":
      case "direct.always":
      case "direct.expired":
        // A direct tool session's own records (`direct/session-journal.ts` reads them); its calls are the `call.*` entries.
        break;
      default:
        throw new JournalCorruptError(runId, `entry ${index} has an unknown kind "${(entry as { kind: string }).kind}"`);
    }
  });
  return {
    startedAt: first.at,
    input: first.input,
    replayVersion: first.replayVersion,
    ...(first.traceparent === undefined ? {} : { traceparent: first.traceparent }),
    calls,
    deliveries,
    logCount,
    ...(end ? { end } : {}),
    length: entries.length,
  };
}

function newerJournal(runId: string, version: number): EngineError {
  return new EngineError(
    "misconfigured",
    `The journal of run ${runId} was written by a newer engine (replay version ${version}; this engine replays versions up to ${REPLAY_VERSION}), so it was not replayed and the run is left as it is. Resume it with a Tapedeck release whose engine replays version ${version} (upgrade this one).`,
  );
}

function failureDelivery(seq: number, at: number, error: ToolFailure): Delivery {
  return { seq, at, ok: false, error };
}
