import type { JournalEvent, JsonValue, ToolFailure, ToolLogLine } from "@tapedeck/protocol";

/**
 * How a call ended, as the script will see it: its result or its failure. Every way a call can
 * end comes to this (a tool's answer, a primitive's, a rejected decision, a policy's verdict on an
 * interruption) before it is journaled (`call.completed` / `call.failed`) and delivered.
 * `notBefore` (mock sources under a virtual clock): not delivered before this (virtual) time.
 * `logs`: what the tool logged while answering (a user tool's `console.*`), leak-scanned by the
 * dispatcher; journaled on the outcome entry for whoever reads the journal, never delivered to
 * the script (so never part of a replay).
 *
 * A run "settles" (ends or parks, `ExecutionResult`); a call has an outcome.
 */
export type CallOutcome = ({ readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: ToolFailure }) & {
  readonly notBefore?: number;
  readonly logs?: readonly ToolLogLine[];
};

/** The journal entry that records a call's outcome, with the tool's logs when it has any. */
export function outcomeEvent(seq: number, outcome: CallOutcome): JournalEvent {
  const logs = outcome.logs === undefined || outcome.logs.length === 0 ? {} : { logs: outcome.logs };
  return outcome.ok ? { kind: "call.completed", seq, result: outcome.value, ...logs } : { kind: "call.failed", seq, error: outcome.error, ...logs };
}

/** The tool's logs an outcome entry carries (`{}` when none), to rebuild its outcome from it. */
export function logsOf(event: JournalEvent): { readonly logs?: readonly ToolLogLine[] } {
  return (event.kind === "call.completed" || event.kind === "call.failed") && event.logs !== undefined ? { logs: event.logs } : {};
}
