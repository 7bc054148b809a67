/**
 * A run's journal as the model reads it: its calls, one line each (tool, arguments, outcome),
 * and its last log lines. Values are cut short; a line whose value was cut names the journal
 * entry that holds it whole (`get_run({ run_id, entry })`).
 */
import type { JournalEntry, JsonValue, ToolFailure } from "@tapedeck/protocol";
import { bound, boundList } from "./text-limits.js";

/** A trace shows the last this many calls: enough to see what led to a failure, small enough to read. */
export const TRACE_CALLS = 30;
/** Arguments and results in a trace are cut past this many characters. */
export const VALUE_CHARS = 300;
/** The last this many log lines are shown: the end of the run's story. */
export const LOG_LINES = 20;
/** A log line is cut past this many characters. */
export const LOG_LINE_CHARS = 500;

/** One call of a run, gathered from its journal entries. */
export interface TracedCall {
  readonly seq: number;
  readonly tool: string;
  readonly args: JsonValue;
  /** The entry that holds the arguments whole. */
  readonly entry: number;
  readonly outcome?: CallOutcome;
}

type CallOutcome =
  /** The tool answered (or a fork reused the parent's answer). */
  | { readonly kind: "completed"; readonly result: JsonValue; readonly entry: number; readonly reusedFrom?: string }
  /** The tool failed, or the engine refused the call before sending it (`rejected`). */
  | { readonly kind: "failed" | "rejected"; readonly error: ToolFailure; readonly entry: number };

/** The calls in `journal`, in the order they were issued. Entries that are not calls are skipped. */
export function tracedCalls(journal: readonly JournalEntry[]): TracedCall[] {
  const calls = new Map<number, TracedCall>();
  for (const entry of journal) {
    switch (entry.kind) {
      case "call.scheduled":
        calls.set(entry.seq, { seq: entry.seq, tool: entry.tool, args: entry.args, entry: entry.index });
        break;
      case "call.rejected":
        calls.set(entry.seq, {
          seq: entry.seq,
          tool: entry.tool,
          args: entry.args,
          entry: entry.index,
          outcome: { kind: "rejected", error: entry.error, entry: entry.index },
        });
        break;
      case "call.completed":
        settle(calls, entry.seq, {
          kind: "completed",
          result: entry.result,
          entry: entry.index,
          ...(entry.reusedFrom ? { reusedFrom: entry.reusedFrom.run } : {}),
        });
        break;
      case "call.failed":
        settle(calls, entry.seq, { kind: "failed", error: entry.error, entry: entry.index });
        break;
      default:
        break;
    }
  }
  return [...calls.values()];
}

function settle(calls: Map<number, TracedCall>, seq: number, outcome: CallOutcome): void {
  const call = calls.get(seq);
  if (call !== undefined) calls.set(seq, { ...call, outcome });
}

/** The trace of `calls`, the last `TRACE_CALLS` of them, one line each. */
export function traceLines(runId: string, calls: readonly TracedCall[]): string[] {
  const { items, cut } = boundList(calls, TRACE_CALLS, "last", "earlier calls");
  return [...(cut ? [cut] : []), ...items.map((call) => callLine(runId, call))];
}

/** `#3 github.get_issue({"n":1}) → {"title":"Bug"}`, naming the entry to read when a value was cut. */
export function callLine(runId: string, call: TracedCall): string {
  const args = cutValue(call.args);
  const cutEntries = args.cut ? [call.entry] : [];
  let outcome: string;
  const o = call.outcome;
  if (o === undefined) outcome = "(no answer yet)";
  else if (o.kind === "completed") {
    const result = cutValue(o.result);
    if (result.cut) cutEntries.push(o.entry);
    outcome = o.reusedFrom ? `${result.text} (reused from run ${o.reusedFrom}, not sent again)` : result.text;
  } else outcome = `${o.kind === "rejected" ? "refused before sending" : "failed"}: ${failureText(o.error)}`;
  const whole = cutEntries.map((entry) => `get_run({ run_id: ${JSON.stringify(runId)}, entry: ${entry} })`);
  return `#${call.seq} ${call.tool}(${args.text}) → ${outcome}${whole.length > 0 ? ` [whole: ${whole.join(", ")}]` : ""}`;
}

function cutValue(value: JsonValue): { readonly text: string; readonly cut: boolean } {
  const json = JSON.stringify(value);
  return { text: bound(json, VALUE_CHARS), cut: json.length > VALUE_CHARS };
}

/** `rate_limited: slow down (retryable)`, cut to `VALUE_CHARS`. */
export function failureText(error: ToolFailure): string {
  return bound(`${error.code}: ${error.message}${error.retryable ? " (retryable)" : ""}`, VALUE_CHARS);
}

/** The last `LOG_LINES` log lines of `journal`, `[level] message`, each cut to `LOG_LINE_CHARS`. */
export function logLines(journal: readonly JournalEntry[]): string[] {
  const logs = journal.flatMap((entry) => (entry.kind === "log" ? [`[${entry.level}] ${bound(entry.message, LOG_LINE_CHARS)}`] : []));
  const { items, cut } = boundList(logs, LOG_LINES, "last", "earlier log lines");
  return [...(cut ? [cut] : []), ...items];
}
