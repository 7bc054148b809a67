import type { JsonValue } from "./json.js";
import type { DecisionWait, RunError, RunWait } from "./run.js";

/** How a run ended. */
export type RunEnd =
  /** The script's default export resolved with `output`. */
  | { readonly status: "completed"; readonly output: JsonValue }
  /** The script threw, hit a limit, or diverged from its journal. */
  | { readonly status: "failed"; readonly error: RunError }
  /** Someone cancelled the run. */
  | { readonly status: "cancelled"; readonly reason: string };

/**
 * Something that happened to a run that a harness may want to hear of (the server turns these
 * into webhooks). Each is written in the same commit as the change it reports, so a listener
 * that reads them from the store misses none, even across a crash.
 */
export type RunEvent =
  /** A run parked: it holds nothing and waits for `waits`. */
  | { readonly type: "run.waiting"; readonly runId: string; readonly waits: readonly RunWait[]; readonly wakeAt?: number }
  /** A run ended. As recorded in the store, a completed run's `output` is null: read it from the run. */
  | { readonly type: "run.ended"; readonly runId: string; readonly end: RunEnd }
  /** A call waits for a decision: `approval.requested`, or the reason it was parked. */
  | { readonly type: "approval.requested" | "tool.schema_changed" | "credentials.expired"; readonly runId: string; readonly wait: DecisionWait };

/** The event that tells a harness a call waits for its decision. */
export function decisionEvent(runId: string, wait: DecisionWait): RunEvent {
  return { type: wait.kind === "approval" ? "approval.requested" : wait.reason, runId, wait };
}
