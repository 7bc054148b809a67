import { sha256Hex } from "../util/ids.js";

/**
 * W3C `traceparent` of a call: the trace id comes from the run, the span id from the
 * idempotency key, so every attempt of a call carries the same value and a server's spans of
 * every attempt join the same trace. It is also the id of the call's span (`telemetry/`).
 */
export function callTraceparent(traceId: string, idempotencyKey: string): string {
  return `00-${traceId}-${callSpanId(idempotencyKey)}-01`;
}

/** The span id of the call a `traceparent` names (its third field). */
export function callSpanId(idempotencyKey: string): string {
  return sha256Hex(`span:${idempotencyKey}`).slice(0, 16);
}

/** The trace id of a run's calls: a hash, so compute it once per run. */
export function runTraceId(runId: string): string {
  return sha256Hex(`trace:${runId}`).slice(0, 32);
}
