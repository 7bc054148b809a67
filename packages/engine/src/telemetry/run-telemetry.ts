import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span } from "@opentelemetry/api";
import type { JournalEntry, PinnedTool } from "@tapedeck/protocol";
import { systemClock, type Clock } from "../clock.js";
import type { ExecutionResult } from "../runs/run-executor.js";
import type { OpenWait } from "../runs/waits.js";
import { withSpanIds } from "./id-generator.js";
import { callSpanId, runSpanId, runTraceId, waitSpanId } from "./span-ids.js";

/**
 * The spans of one execution of a run (see docs/design/telemetry.md): the run's span, a span per
 * call sent (attempts as its events), a span per wait (sleep, signal, approval, parked call,
 * rate-limit window, child workflow). Ids come from the journal (`span-ids.ts`), start times
 * from the journal's entries: an execution that resumes the run starts the same spans again, and
 * only the execution that sees a span end ends it (a parked or crashed execution's are dropped
 * unended, so never exported).
 *
 * With no tracer provider registered the run's span does not record, and `startRunTelemetry`
 * returns `NO_TELEMETRY`: a call then costs one call of an empty method, and no attribute object
 * is ever built.
 */
export interface RunTelemetry {
  /** The span of a call about to be sent (its first attempt in this execution is `attempt`). */
  call(seq: number, tool: PinnedTool, key: string, attempt: number): CallTelemetry | undefined;
  waitStarted(wait: OpenWait): void;
  /** Wait `seq` ended (its call has its outcome, or is sent). */
  waitEnded(seq: number): void;
  /** The execution is over: the run's span ends if the run did, else it is dropped (the next execution starts it again). */
  finish(result: ExecutionResult | undefined): void;
}

export interface CallTelemetry {
  /** The W3C trace context of the call's span: what its source sends on. */
  readonly traceparent: string;
  attempt(attempt: number): void;
  interrupted(attempt: number, reason: string): void;
  /** The call has its outcome (`failure`: its code) or was parked. */
  end(how: { readonly ok: true } | { readonly ok: false; readonly code: string } | { readonly parked: string }): void;
}

const INSTRUMENTATION = "@tapedeck/engine";

export const NO_TELEMETRY: RunTelemetry = {
  call: () => undefined,
  waitStarted: () => {},
  waitEnded: () => {},
  finish: () => {},
};

export interface TelemetryRun {
  readonly id: string;
  readonly toolsetId: string;
  readonly namespace?: string;
  readonly parentId?: string;
  readonly caller?: { readonly runId: string; readonly seq: number };
}

/**
 * Starts the run's span for an execution about to go live; `NO_TELEMETRY` when it does not
 * record (no tracer provider, or not sampled). `traceparent`: the trace the run was started in.
 */
export function startRunTelemetry(
  run: TelemetryRun,
  entries: readonly JournalEntry[],
  traceparent: string | undefined,
  clock: Clock = systemClock,
): RunTelemetry {
  const tracer = trace.getTracer(INSTRUMENTATION);
  const started = entries[0]?.at ?? clock.now();
  const parent = traceparent === undefined ? undefined : remoteContext(traceparent);
  const traceId = parent === undefined ? runTraceId(run.id) : trace.getSpanContext(parent)!.traceId;
  const span = withSpanIds(traceId, runSpanId(run.id), () =>
    tracer.startSpan(`invoke_workflow ${run.toolsetId}`, { kind: SpanKind.INTERNAL, startTime: started }, parent ?? ROOT_CONTEXT),
  );
  if (!span.isRecording()) return NO_TELEMETRY;
  span.setAttributes({
    "gen_ai.operation.name": "invoke_workflow",
    "tapedeck.run.id": run.id,
    "tapedeck.toolset.id": run.toolsetId,
    ...(run.namespace === undefined ? {} : { "tapedeck.namespace": run.namespace }),
    ...(run.parentId === undefined ? {} : { "tapedeck.run.forked_from": run.parentId }),
    ...(run.caller === undefined ? {} : { "tapedeck.run.caller": run.caller.runId, "tapedeck.run.caller_seq": run.caller.seq }),
  });
  return new LiveRunTelemetry(run.id, span, entries, clock);
}

/** A remote parent from a W3C `traceparent`; undefined when it is not one. */
function remoteContext(traceparent: string): Context | undefined {
  const match = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent);
  if (match === null) return undefined;
  const spanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return trace.isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : undefined;
}

class LiveRunTelemetry implements RunTelemetry {
  readonly #runId: string;
  readonly #span: Span;
  readonly #context: Context;
  readonly #traceId: string;
  /** When each call was scheduled (`call.scheduled`), and last parked (`call.parked`), by seq: the start of its spans. */
  readonly #scheduledAt = new Map<number, number>();
  readonly #parkedAt = new Map<number, number>();
  readonly #waits = new Map<number, Span>();
  #finished = false;
  readonly #clock: Clock;

  constructor(runId: string, span: Span, entries: readonly JournalEntry[], clock: Clock) {
    this.#clock = clock;
    this.#runId = runId;
    this.#span = span;
    this.#context = trace.setSpan(context.active(), span);
    this.#traceId = span.spanContext().traceId;
    for (const entry of entries) {
      if (entry.kind === "call.scheduled") this.#scheduledAt.set(entry.seq, entry.at);
      else if (entry.kind === "call.parked") this.#parkedAt.set(entry.seq, entry.at);
    }
  }

  call(seq: number, tool: PinnedTool, key: string, attempt: number): CallTelemetry | undefined {
    if (this.#finished) return undefined;
    const remote = tool.source === "mcp" ? tool.remote : undefined;
    const mcp = remote !== undefined;
    const name = remote?.name ?? `${tool.group}.${tool.name}`;
    const attributes: Attributes = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": name,
      "gen_ai.tool.call.id": key,
      "tapedeck.run.id": this.#runId,
      "tapedeck.call.seq": seq,
      "tapedeck.tool.source": tool.source,
      "tapedeck.tool": `${tool.group}.${tool.name}`,
      ...(remote === undefined ? {} : { "mcp.method.name": "tools/call", "tapedeck.mcp.server": remote.server }),
    };
    const startTime = this.#scheduledAt.get(seq) ?? this.#clock.now();
    const span = withSpanIds(this.#traceId, callSpanId(key), () =>
      trace
        .getTracer(INSTRUMENTATION)
        .startSpan(
          mcp ? `tools/call ${name}` : `execute_tool ${name}`,
          { kind: mcp ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes, startTime },
          this.#context,
        ),
    );
    const ids = span.spanContext();
    const call = new LiveCallTelemetry(span, this.#clock, `00-${ids.traceId}-${ids.spanId}-0${ids.traceFlags & TraceFlags.SAMPLED}`);
    if (attempt > 1) span.addEvent("tapedeck.call.resumed", { "tapedeck.call.attempt": attempt }, this.#clock.now());
    return call;
  }

  waitStarted(wait: OpenWait): void {
    // A wait open already (added again, as the same wait) keeps its span: a second one would repeat its id.
    if (this.#finished || wait.kind === "timed" || this.#waits.has(wait.seq)) return;
    const what =
      wait.kind === "signal"
        ? { name: `wait signal ${wait.name}`, attributes: { "tapedeck.signal.name": wait.name } }
        : wait.kind === "approval" || wait.kind === "parked" || wait.kind === "rate_limit"
          ? { name: `wait ${wait.kind} ${wait.tool.group}.${wait.tool.name}`, attributes: { "tapedeck.tool": `${wait.tool.group}.${wait.tool.name}` } }
          : wait.kind === "child"
            ? { name: `wait workflow ${wait.workflow}`, attributes: { "tapedeck.child.run.id": wait.runId } }
            : { name: "wait sleep", attributes: { "tapedeck.wait.until": new Date(wait.until).toISOString() } };
    const startTime = (wait.kind === "parked" ? this.#parkedAt.get(wait.seq) : undefined) ?? this.#scheduledAt.get(wait.seq) ?? this.#clock.now();
    const span = withSpanIds(this.#traceId, waitSpanId(this.#runId, wait.seq), () =>
      trace.getTracer(INSTRUMENTATION).startSpan(
        what.name,
        {
          kind: SpanKind.INTERNAL,
          attributes: { ...what.attributes, "tapedeck.wait.kind": wait.kind, "tapedeck.run.id": this.#runId, "tapedeck.call.seq": wait.seq },
          startTime,
        },
        this.#context,
      ),
    );
    this.#waits.set(wait.seq, span);
  }

  waitEnded(seq: number): void {
    const span = this.#waits.get(seq);
    if (span === undefined) return;
    this.#waits.delete(seq);
    span.end(this.#clock.now());
  }

  finish(result: ExecutionResult | undefined): void {
    if (this.#finished) return;
    this.#finished = true;
    // A parked or stopped execution's spans are left unended: the next execution starts them again under the same ids.
    if (result === undefined || result.status === "waiting") return;
    this.#span.setAttribute("tapedeck.run.status", result.status);
    if (result.status === "failed")
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: result.error.message }).setAttribute("error.type", result.error.kind);
    else if (result.status === "cancelled") this.#span.setStatus({ code: SpanStatusCode.ERROR, message: `cancelled: ${result.reason}` });
    const now = this.#clock.now();
    for (const span of this.#waits.values()) span.end(now);
    this.#waits.clear();
    this.#span.end(now);
  }
}

class LiveCallTelemetry implements CallTelemetry {
  constructor(
    private readonly span: Span,
    private readonly clock: Clock,
    readonly traceparent: string,
  ) {}

  attempt(attempt: number): void {
    this.span.addEvent("tapedeck.call.attempt", { "tapedeck.call.attempt": attempt }, this.clock.now());
  }

  interrupted(attempt: number, reason: string): void {
    this.span.addEvent("tapedeck.call.interrupted", { "tapedeck.call.attempt": attempt, "tapedeck.reason": reason }, this.clock.now());
  }

  end(how: { readonly ok: true } | { readonly ok: false; readonly code: string } | { readonly parked: string }): void {
    // Parked, the call is sent again once the harness decides: that dispatch starts this span again.
    if ("parked" in how) return;
    if (!how.ok) this.span.setStatus({ code: SpanStatusCode.ERROR, message: how.code }).setAttribute("error.type", how.code);
    this.span.end(this.clock.now());
  }
}
