import { sha256Hex } from "../util/ids.js";

/**
 * W3C `traceparent` of a call: the trace id comes from the run, the span id from the
 * idempotency key, so every attempt of a call carries the same value and a server's spans of
 * every attempt join the same trace.
 */
export function callTraceparent(runId: string, idempotencyKey: string): string {
  const traceId = sha256Hex(`trace:${runId}`).slice(0, 32);
  const spanId = sha256Hex(`span:${idempotencyKey}`).slice(0, 16);
  return `00-${traceId}-${spanId}-01`;
}
