/**
 * The open calls of a run that wait on the engine rather than on a tool source: primitive waits
 * (`sleep`, `signal`, a workflow's `result()`), calls waiting for a decision (approval, parked),
 * and, under a virtual clock, outcomes that reach the script at a later virtual time. The executor keeps them here;
 * this file knows how each is described to the harness and when it is due.
 */
import { needsDecision, toolFailure, type JsonValue, type ParkReason, type PinnedTool, type RunWait, type ToolFailure } from "@tapedeck/protocol";
import { formatDuration } from "../util/duration.js";
import type { CallOutcome } from "./call-outcome.js";

export type OpenWait =
  | { readonly kind: "sleep"; readonly seq: number; readonly until: number }
  | { readonly kind: "signal"; readonly seq: number; readonly name: string; readonly timeoutMs?: number; readonly until?: number }
  | { readonly kind: "approval"; readonly seq: number; readonly tool: PinnedTool; readonly args: JsonValue; readonly reason?: string }
  | {
      readonly kind: "parked";
      readonly seq: number;
      readonly tool: PinnedTool;
      readonly args: JsonValue;
      readonly reason: ParkReason;
      readonly message: string;
      readonly credential?: string;
    }
  /** A call over its tool's rate limit (`onLimit: "wait"`): at `until` it tries to take a place in the window again. */
  | { readonly kind: "rate_limit"; readonly seq: number; readonly tool: PinnedTool; readonly until: number }
  /** A virtual-time outcome (a mock's delay): delivered when the clock reaches `until`. */
  | { readonly kind: "timed"; readonly seq: number; readonly until: number; readonly outcome: CallOutcome }
  /** `result()` of a workflow: settled by the end of the child run `runId`. */
  | { readonly kind: "child"; readonly seq: number; readonly runId: string; readonly workflow: string };

/** When a wait is due on its own (a timer), if ever. */
export function dueAt(wait: OpenWait): number | undefined {
  return wait.kind === "sleep" || wait.kind === "signal" || wait.kind === "timed" || wait.kind === "rate_limit" ? wait.until : undefined;
}

/** How a wait is shown to the harness; a virtual-time outcome is internal to a test and not shown. */
export function describeWait(wait: OpenWait): RunWait | undefined {
  switch (wait.kind) {
    case "sleep":
      return { kind: "sleep", seq: wait.seq, until: wait.until };
    case "signal":
      return { kind: "signal", seq: wait.seq, name: wait.name, ...(wait.until === undefined ? {} : { until: wait.until }) };
    case "approval":
      return { kind: "approval", seq: wait.seq, tool: toolName(wait.tool), args: wait.args, ...(wait.reason === undefined ? {} : { reason: wait.reason }) };
    case "parked":
      return {
        kind: "parked",
        seq: wait.seq,
        tool: toolName(wait.tool),
        args: wait.args,
        reason: wait.reason,
        message: wait.message,
        ...(wait.credential === undefined ? {} : { credential: wait.credential }),
      };
    case "child":
      return { kind: "child", seq: wait.seq, runId: wait.runId, workflow: wait.workflow };
    case "rate_limit":
      return { kind: "rate_limit", seq: wait.seq, tool: toolName(wait.tool), until: wait.until };
    case "timed":
      return undefined;
  }
}

/** The waits to show, in seq order; `onlyDecisions` keeps those a harness must decide. */
export function describeWaits(waits: Iterable<OpenWait>, onlyDecisions = false): RunWait[] {
  const described: RunWait[] = [];
  for (const wait of waits) {
    const shown = describeWait(wait);
    if (shown && (!onlyDecisions || needsDecision(shown))) described.push(shown);
  }
  return described.sort((a, b) => a.seq - b.seq);
}

/** The earliest time one of `waits` is due, if any is. */
export function earliestDue(waits: Iterable<OpenWait>): number | undefined {
  let earliest: number | undefined;
  for (const wait of waits) {
    const due = dueAt(wait);
    if (due !== undefined && (earliest === undefined || due < earliest)) earliest = due;
  }
  return earliest;
}

export function signalTimedOut(name: string, timeoutMs: number | undefined): ToolFailure {
  const within = timeoutMs === undefined ? "" : ` within ${formatDuration(timeoutMs)}`;
  return toolFailure("timeout", `No signal "${name}" arrived${within}. Catch this error to go on without it, or wait longer.`, { retryable: true });
}

export function approvalRejected(tool: string, reason: string | undefined): ToolFailure {
  return toolFailure("approval_rejected", `The call to ${tool} was rejected${reason ? `: ${reason}` : ""}. It was not sent.`);
}

export function parkedRejected(tool: string, parked: ParkReason, reason: string | undefined): ToolFailure {
  const code = parked === "tool.schema_changed" ? "schema_changed" : "approval_rejected";
  const why = parked === "tool.schema_changed" ? "its tool's schema changed" : "its credential expired";
  return toolFailure(code, `The call to ${tool} was held back because ${why}, and the harness rejected it${reason ? `: ${reason}` : ""}. It was not sent.`);
}

function toolName(tool: PinnedTool): string {
  return `${tool.group}.${tool.name}`;
}
