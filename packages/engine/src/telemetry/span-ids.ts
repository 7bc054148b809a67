import { sha256Hex } from "../util/ids.js";

/**
 * The ids of a run's spans, derived from the run id and its journal (a call's idempotency key,
 * a wait's seq) rather than drawn at random: an execution that resumes the run after a crash or
 * a park starts the same spans again under the same ids, so one run is one trace, and a span
 * cut short by a crash is never exported twice under two ids (see docs/design/telemetry.md).
 *
 * The trace id and a call's span id are those of `runs/trace-context.ts`, which Tapedeck already
 * sends as `traceparent`: the call span is the parent of whatever the tool's server records.
 */
export { callSpanId, runTraceId } from "../runs/trace-context.js";

/** The span id of the run's span. */
export function runSpanId(runId: string): string {
  return sha256Hex(`run-span:${runId}`).slice(0, 16);
}

/** The span id of the wait of call `seq` (a sleep, a signal, an approval). */
export function waitSpanId(runId: string, seq: number): string {
  return sha256Hex(`wait-span:${runId}:${seq}`).slice(0, 16);
}
