import { toolFailure, type JsonValue, type PinnedTool, type ToolFailure, type ToolLogLine } from "@tapedeck/protocol";
import { systemClock, type Clock } from "../clock.js";
import { MAX_ATTEMPTS, MAX_VALUE_BYTES, RUN_CONCURRENCY } from "../limits.js";
import { SHAPE_SCANNER, type KnownSecret, type LeakScanner } from "../secrets/leak-scanner.js";
import { outcomeUnknown } from "../sources/outcome-unknown.js";
import type { SubCallJournal } from "../sources/sub-call-journal.js";
import type { Park, QueueWatcher, StagedAttempt, ToolOutcome, ToolSource } from "../sources/tool-source.js";
import type { StagedHostTask } from "../store/host-task-store.js";
import type { CallOutcome } from "./call-outcome.js";
import { boundedAttempt } from "../sources/bounded-attempt.js";
import { Semaphore } from "./semaphore.js";
import { valueProblem } from "../util/value-bounds.js";
import { callTraceparent, runTraceId } from "./trace-context.js";
import { noteCallEnded, observed } from "../telemetry/engine-observers.js";
import { NO_TELEMETRY, type CallTelemetry, type RunTelemetry } from "../telemetry/run-telemetry.js";

/**
 * Sends one run's calls to their sources and applies each tool's policy.
 *
 * Invariants:
 * - A call is given here only once its `call.scheduled` entry is durable.
 * - An attempt after the first is sent only once its `call.attempt` entry is durable.
 * - Only an interruption makes a call be sent again; a tool that answers with an error is done.
 * - At most `runConcurrency` calls of the run, and `policy.concurrency` of one tool, are in flight.
 * - After `abandon()`, nothing settles: late results are dropped.
 * - Every result and failure a source answers, and the logs it carries, is leak-scanned before it
 *   becomes a `CallOutcome`: secrets are redacted before the journal or the script sees them, whatever the source.
 * - A host tool's attempt times out (`timeout`) only once a worker has taken it: waiting for a
 *   worker is not part of the attempt. Its `queueTimeout` bounds that wait, and then nothing was sent.
 */

/** How a dispatched call ends: with an outcome, or parked until the harness acts (see `ToolOutcome` `park`). */
export type Dispatched = CallOutcome | { readonly parked: Park };

export interface DispatchRequest {
  readonly seq: number;
  readonly tool: PinnedTool;
  readonly args: JsonValue;
  readonly key: string;
  /** The attempt to send first: 1 for a new call, n + 1 when resuming after n attempts. */
  readonly attempt: number;
  /** Of the attempts up to `attempt`, those made because the engine stopped: not counted against `maxAttempts`. Default 0. */
  readonly uncounted?: number;
  /** Makes a `call.attempt` entry durable; called before each attempt after the first. */
  readonly recordAttempt: (attempt: number, reason: string) => Promise<void>;
  /** The harness approved the call after a `tool.schema_changed` park: its source sends it as it is (see `ToolCallRequest`). */
  readonly schemaChangeApproved?: boolean;
  /** Hears whether a worker has taken a host tool's attempt (see `QueueWatcher`). */
  readonly queue?: QueueWatcher;
  /** Records the host calls the source makes for the call (see `ToolCallRequest.subCalls`). */
  readonly subCalls?: SubCallJournal;
  /** The call's sensitive argument values (`sensitiveParams`): redacted from its result like a credential it sent. */
  readonly secrets?: readonly KnownSecret[];
}

export interface DispatcherOptions {
  readonly runConcurrency?: number;
  readonly maxAttempts?: number;
  readonly maxValueBytes?: number;
  /** Redacts secrets in results and failures. Default: key shapes only (`SHAPE_SCANNER`). */
  readonly leakScanner?: LeakScanner;
  /** Times attempts. Default: the system clock. */
  readonly clock?: Clock;
}

/** How an attempt ends when the run stops waiting for it. */
const STOPPED: ToolOutcome = { kind: "interrupted", reason: "the run stopped waiting for this call" };

export class RunDispatcher {
  private readonly run: Semaphore;
  private readonly perTool = new Map<string, Semaphore>();
  /** Stops each attempt in flight (it ends as interrupted, its signal aborts); called together by `abandon`. */
  private readonly attemptsInFlight = new Set<(reason: Error) => void>();
  /** First attempts staged with their source (`stage`), by seq, holding their slots until dispatched. */
  private readonly staged = new Map<number, StagedAttempt>();
  private abandoned = false;
  private readonly maxAttempts: number;
  private readonly maxValueBytes: number;
  private readonly scanner: LeakScanner;
  private readonly clock: Clock;
  private traceId: string;
  private active = 0;
  /** The spans of the execution (`telemetry/run-telemetry.ts`): none unless a tracer provider records them. */
  telemetry: RunTelemetry = NO_TELEMETRY;

  constructor(
    private readonly runId: string,
    private readonly source: ToolSource,
    options: DispatcherOptions = {},
  ) {
    this.run = new Semaphore(options.runConcurrency ?? RUN_CONCURRENCY);
    this.maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
    this.maxValueBytes = options.maxValueBytes ?? MAX_VALUE_BYTES;
    this.scanner = options.leakScanner ?? SHAPE_SCANNER;
    this.clock = options.clock ?? systemClock;
    this.traceId = runTraceId(runId);
  }

  /** Calls dispatched and not yet settled. */
  get inFlight(): number {
    return this.active;
  }

  /** Sends the call (waiting for a free slot) and resolves with how it ended; never rejects. */
  async dispatch(request: DispatchRequest): Promise<Dispatched> {
    this.active++;
    const tool = this.toolSemaphore(request.tool);
    // A staged call took its slots when it was staged. Else the tool's slot first: a call waiting
    // for its tool must not hold one of the run's slots. A free slot is taken without an await:
    // most calls never wait.
    if (!this.staged.delete(request.seq)) {
      if (!tool.tryAcquire()) await tool.acquire();
      if (!this.run.tryAcquire()) await this.run.acquire();
    }
    try {
      const call = this.telemetry.call(request.seq, request.tool, request.key, request.attempt);
      const since = observed() ? performance.now() : undefined;
      const dispatched = await this.attempts(request, call);
      // Abandoned, the call is not over: the execution that sends it again starts its span again (same id).
      if (!this.abandoned && (call !== undefined || since !== undefined)) ended(request.tool, dispatched, call, since);
      return dispatched;
    } finally {
      tool.release();
      this.run.release();
      this.active--;
    }
  }

  /**
   * Stages the first attempt of a call being scheduled with its source (`ToolSource.stage`), when
   * it would be sent at once: its slots are taken now and held for its `dispatch`, so that a task
   * workers can see as soon as the scheduling commits is one the concurrency limits let go. The
   * task goes in the commit of the call's `call.scheduled` entry; the call is then dispatched
   * once that commit is durable (or, if it never is, dropped by `abandon`).
   */
  stage(seq: number, tool: PinnedTool, args: JsonValue, key: string): StagedHostTask | undefined {
    if (this.abandoned || this.source.stage === undefined) return undefined;
    const toolSlots = this.toolSemaphore(tool);
    if (!toolSlots.tryAcquire()) return undefined;
    if (!this.run.tryAcquire()) {
      toolSlots.release();
      return undefined;
    }
    const traceparent = callTraceparent(this.traceId, key);
    const staged = this.source.stage({ tool, args, runId: this.runId, seq, idempotencyKey: key, attempt: 1, traceparent });
    if (staged === undefined) {
      toolSlots.release();
      this.run.release();
      return undefined;
    }
    this.staged.set(seq, staged);
    return staged.task;
  }

  /** Calls go in the trace of `traceparent` (the run was started in one) instead of the run's own. */
  joinTrace(traceparent: string): void {
    this.traceId = traceparent.split("-")[1] ?? this.traceId;
  }

  /**
   * Stops wanting any result: ends the attempts in flight and aborts their signals (with
   * `reason`: `executionSuspended` when the run stays `running` to be resumed); their outcomes
   * are dropped by the caller.
   */
  abandon(reason: Error = new Error("the run no longer wants this result")): void {
    this.abandoned = true;
    for (const stop of this.attemptsInFlight) stop(reason);
    // Staged and never dispatched: their scheduling was not (or will not be acted on as) durable.
    for (const staged of this.staged.values()) staged.drop();
    this.staged.clear();
  }

  private toolSemaphore(tool: PinnedTool): Semaphore {
    const key = `${tool.group}.${tool.name}`;
    let semaphore = this.perTool.get(key);
    if (!semaphore) this.perTool.set(key, (semaphore = new Semaphore(tool.policy.concurrency)));
    return semaphore;
  }

  private async attempts(request: DispatchRequest, call: CallTelemetry | undefined): Promise<Dispatched> {
    const { tool } = request;
    for (let attempt = request.attempt; ; attempt++) {
      call?.attempt(attempt);
      const outcome = await this.attempt(request, attempt, call);
      if (this.abandoned) return { ok: false, error: toolFailure("outcomeUnknown", "The run stopped waiting for this call.") };
      // The credential this attempt sent, if any, and the call's sensitive values are redacted wherever they come back.
      const sent = [...(outcome.secrets ?? []), ...(request.secrets ?? [])];
      const scanner = sent.length === 0 ? this.scanner : this.scanner.with(sent);
      if (outcome.kind === "park") return { parked: { ...outcome.park, message: scanner.scanText(outcome.park.message).value } };
      const later = outcome.kind !== "interrupted" && outcome.notBefore !== undefined ? { notBefore: outcome.notBefore } : {};
      // Bounded before the leak scan walks it (recursively) and the journal stringifies it.
      // A tool's logs are scanned like its answer (its source bounded them: a user tool's `logLines`).
      const logs = outcome.kind !== "interrupted" && outcome.logs !== undefined ? { logs: scanLogs(scanner, outcome.logs) } : {};
      if (outcome.kind === "result") return { ...(boundsFailure(outcome.value) ?? this.checkSize(scanner.scanValue(outcome.value).value)), ...later, ...logs };
      if (outcome.kind === "failure") return { ok: false, error: scanFailure(scanner, boundedFailure(outcome.failure)), ...later, ...logs };
      // The reason is journaled (`call.attempt`) and may end up in the script's error.
      const reason = scanner.scanText(outcome.reason).value;
      call?.interrupted(attempt, reason);
      if (tool.policy.onInterruption === "at_most_once") return { ok: false, error: outcomeUnknown(reason) };
      if (attempt - (request.uncounted ?? 0) >= this.maxAttempts) return { ok: false, error: tooManyAttempts(attempt, reason) };
      await request.recordAttempt(attempt + 1, reason);
    }
  }

  /**
   * One attempt (`boundedAttempt`: the first of the source's outcome, the tool's timeouts, and the
   * run no longer waiting, `abandon`). Rejects if the source rejects first.
   */
  private attempt(request: DispatchRequest, attempt: number, call: CallTelemetry | undefined): Promise<ToolOutcome> {
    const bounded = boundedAttempt(
      this.source,
      {
        tool: request.tool,
        args: request.args,
        runId: this.runId,
        seq: request.seq,
        idempotencyKey: request.key,
        attempt,
        // The call span's own context when it records (the same ids, but its sampled flag), so the source's spans join it.
        traceparent: call?.traceparent ?? callTraceparent(this.traceId, request.key),
        ...(request.schemaChangeApproved === true ? { schemaChangeApproved: true } : {}),
        ...(request.subCalls === undefined ? {} : { subCalls: request.subCalls }),
        // A source that records sub-calls (a user tool) keeps the call's sensitive values out of them.
        ...(request.subCalls === undefined || request.secrets === undefined ? {} : { secrets: request.secrets }),
      },
      {
        clock: this.clock,
        queue: request.queue,
        stopped: STOPPED,
        // Abandoning ends the attempt at once, so no timer of a call nobody wants keeps the process up.
        stopFirst: this.abandoned ? new Error("the run no longer wants this result") : undefined,
      },
    );
    const stop = (reason: Error) => bounded.stop(reason);
    this.attemptsInFlight.add(stop);
    const forget = () => this.attemptsInFlight.delete(stop);
    bounded.outcome.then(forget, forget);
    return bounded.outcome;
  }

  private checkSize(value: JsonValue): CallOutcome {
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes <= this.maxValueBytes) return { ok: true, value };
    return {
      ok: false,
      error: toolFailure(
        "result_too_large",
        `The result is ${bytes} bytes; one recorded value may be at most ${this.maxValueBytes} bytes. Ask the tool for less (a page, a filter, fewer fields).`,
      ),
    };
  }
}

export { outcomeUnknown };

/** Ends the call's span and tells the process's metrics (`telemetry/`), whichever listens. */
function ended(tool: PinnedTool, dispatched: Dispatched, call: CallTelemetry | undefined, since: number | undefined): void {
  const how =
    "parked" in dispatched ? { parked: dispatched.parked.reason } : dispatched.ok ? { ok: true as const } : { ok: false as const, code: dispatched.error.code };
  call?.end(how);
  if (since === undefined) return;
  const outcome = "parked" in how ? "parked" : how.ok ? "ok" : "error";
  noteCallEnded({ source: tool.source, tool: `${tool.group}.${tool.name}`, outcome, seconds: (performance.now() - since) / 1000 });
}

export function tooManyAttempts(attempts: number, reason: string): ToolFailure {
  return toolFailure("too_many_attempts", `The call was interrupted ${attempts} times (last: ${reason}); it was not sent again.`);
}

/** A result out of the value bounds (nested too deep), as the call's failure. */
function boundsFailure(value: JsonValue): CallOutcome | undefined {
  const problem = valueProblem(value);
  if (problem === undefined) return undefined;
  return { ok: false, error: toolFailure("result_too_large", `The tool's result is refused: ${problem}. Ask the tool for less, or for a flatter shape.`) };
}

/** A failure whose details are out of the value bounds loses them (its code and message stay). */
function boundedFailure(failure: ToolFailure): ToolFailure {
  if (failure.details === undefined || valueProblem(failure.details) === undefined) return failure;
  return toolFailure(failure.code, failure.message, { retryable: failure.retryable });
}

/** A failure with secrets redacted from its message and details (a tool may echo what it was sent). */
function scanFailure(scanner: LeakScanner, failure: ToolFailure): ToolFailure {
  const message = scanner.scanText(failure.message).value;
  const details = failure.details === undefined ? undefined : scanner.scanValue(failure.details).value;
  return message === failure.message && details === failure.details ? failure : toolFailure(failure.code, message, { retryable: failure.retryable, details });
}

/** A tool's log lines with secrets redacted from their messages. */
function scanLogs(scanner: LeakScanner, logs: readonly ToolLogLine[]): ToolLogLine[] {
  return logs.map((line) => ({ level: line.level, message: scanner.scanText(line.message).value }));
}
