import { randomBytes } from "node:crypto";

/**
 * The ids the next span started takes (`withSpanIds`), read by `TapedeckIdGenerator`. A span is
 * started synchronously, so a slot set just before `startSpan` and cleared just after is read by
 * that span only.
 */
let next: { readonly traceId: string; readonly spanId: string } | undefined;

/**
 * An OpenTelemetry SDK `IdGenerator` (structurally: this package depends on the API only) that
 * gives the spans Tapedeck starts the ids derived from their run's journal (`span-ids.ts`), and
 * every other span random ids as the SDK's own generator does. A tracer provider made without it
 * still records Tapedeck's spans, under random ids: a resumed run is then a new trace, and a call
 * span is not the `traceparent` its MCP server saw (docs/design/telemetry.md).
 */
export class TapedeckIdGenerator {
  generateTraceId(): string {
    return next?.traceId ?? nonZeroHex(16);
  }

  generateSpanId(): string {
    return next?.spanId ?? nonZeroHex(8);
  }
}

/** Runs `start` (a `tracer.startSpan`) with the span's ids set for the generator. */
export function withSpanIds<T>(traceId: string, spanId: string, start: () => T): T {
  next = { traceId, spanId };
  try {
    return start();
  } finally {
    next = undefined;
  }
}

/** W3C trace context forbids all-zero ids. */
function nonZeroHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString("hex");
    if (/[^0]/.test(hex)) return hex;
  }
}
