import type { JsonValue } from "./json.js";
import type { ToolFailure } from "./failure.js";
import type { RunBudget } from "./run-budget.js";
import type { SubCallAnswer } from "./user-tool.js";

/** The life of a run. */
export const RunStatus = {
  /** Created, not yet started by an engine. */
  queued: "queued",
  /** An engine is executing it (or was, until it died: then it resumes by replay). */
  running: "running",
  /** Holds no sandbox; waits for a sleep, a signal, an approval, a parked call or a child workflow. */
  waiting: "waiting",
  /** Ended with an output. */
  completed: "completed",
  /** Ended with an error. */
  failed: "failed",
  /** Ended because someone cancelled it. */
  cancelled: "cancelled",
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export const terminalStatuses: readonly RunStatus[] = ["completed", "failed", "cancelled"];

/** Where in the model's script something happened (1-based line and column). */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** Why a run failed. */
export const RunErrorKind = {
  /** The script threw (its own error, or a `ToolError` it did not catch). */
  script: "script",
  /** The script went past a limit: CPU time, memory, stack, journal size. */
  limit: "limit",
  /** Re-running the script made a call different from the one recorded. */
  divergence: "divergence",
  /** The script can never go on: it awaits a promise that nothing will settle. */
  deadlock: "deadlock",
  /** The output is not JSON or is too large. */
  output: "output",
  /** A fault of the engine itself. */
  internal: "internal",
} as const;
export type RunErrorKind = (typeof RunErrorKind)[keyof typeof RunErrorKind];

/** A run's error, written for whoever must act on it (often a model). */
export interface RunError {
  readonly kind: RunErrorKind;
  /** The error's name in the script (`TypeError`, `ToolError`, …), when it has one. */
  readonly name?: string;
  readonly message: string;
  /** For an uncaught `ToolError`: its failure. */
  readonly failure?: ToolFailure;
  /** For an uncaught `ToolError`: the call that failed. */
  readonly call?: { readonly seq: number; readonly tool: string };
  /** Where in the model's script, after source mapping. */
  readonly position?: SourcePosition;
  /** The stack, in the model's script positions. */
  readonly stack?: string;
  /** A few lines of the script around `position`, with a caret. */
  readonly frame?: string;
}

/** Log levels of `console.*` in a script. */
export type LogLevel = "debug" | "info" | "log" | "warn" | "error";

/**
 * A line a tool logged while answering a call (a user tool's `console.*`), carried on the call's
 * outcome entry. Not a script's `log` entry: it takes no place among the script's log lines.
 */
export interface ToolLogLine {
  readonly level: LogLevel;
  readonly message: string;
}

/**
 * One journal entry. The journal is append-only; `index` numbers the entries of a run from 0.
 * Calls are numbered separately by `seq` (from 1), in the order the script issues them.
 */
export type JournalEntry = { readonly index: number; readonly at: number } & JournalEvent;

export type JournalEvent =
  /** The run began, with its input. Always entry 0. */
  | {
      readonly kind: "run.started";
      readonly input: JsonValue;
      readonly replayVersion: number;
      readonly traceparent?: string;
      /** The budget the start gave (over the toolset's and the engine's): kept here so every execution of the run holds it to the same. */
      readonly budget?: RunBudget;
    }
  /** The script issued a call that passed validation; it is sent once this entry is durable. */
  | { readonly kind: "call.scheduled"; readonly seq: number; readonly tool: string; readonly args: JsonValue; readonly key: string }
  /** The script issued a call that was refused before being sent (bad arguments, unknown tool). */
  | { readonly kind: "call.rejected"; readonly seq: number; readonly tool: string; readonly args: JsonValue; readonly error: ToolFailure }
  /** A call is sent again after an interruption (attempt ≥ 2), with the same key. */
  | { readonly kind: "call.attempt"; readonly seq: number; readonly attempt: number; readonly reason: string }
  /**
   * A call of a tool whose rate limit says `onLimit: "wait"` found its window full: it waits
   * until `until` (when a place frees), then tries to take one again. Resumed, it waits for the
   * same `until`: the window is not checked again before then.
   */
  | { readonly kind: "call.throttled"; readonly seq: number; readonly until: number }
  /** A throttled call took its place in its window: it goes on (to its approval, or its tool); resumed, it is not checked again. */
  | { readonly kind: "call.admitted"; readonly seq: number }
  /**
   * A call's result; delivered to the script in journal order. `reusedFrom`: taken from the parent run's journal by a fork, not sent.
   * `logs`: what the tool logged during the attempt that answered (a user tool's `console.*`), leak-scanned; never replayed.
   */
  | {
      readonly kind: "call.completed";
      readonly seq: number;
      readonly result: JsonValue;
      readonly reusedFrom?: { readonly run: string; readonly seq: number };
      readonly logs?: readonly ToolLogLine[];
    }
  /** A call's failure; delivered to the script in journal order. `logs`: as for `call.completed`. */
  | { readonly kind: "call.failed"; readonly seq: number; readonly error: ToolFailure; readonly logs?: readonly ToolLogLine[] }
  /**
   * The harness decided on a call that waited for approval or was parked: `approved` sends it
   * (with its key, once this entry is durable), `rejected` fails it with `approval_rejected`
   * (or `schema_changed` for a parked call).
   */
  | { readonly kind: "call.decided"; readonly seq: number; readonly decision: Decision; readonly reason?: string }
  /** A scheduled call was held back before being sent (its tool's schema changed, its credential expired): it waits for a decision. */
  | { readonly kind: "call.parked"; readonly seq: number; readonly reason: ParkReason; readonly message: string; readonly credential?: string }
  /**
   * A host call a user tool made during call `seq` (its `fetch`, a tool it invoked, the
   * workspace), keyed `{run}/{seq}.{n}`, with the answer the tool was given: a retry or resume
   * of call `seq` re-runs the tool against these answers and sends nothing for them.
   */
  | { readonly kind: "call.sub"; readonly seq: number; readonly key: string; readonly tool: string; readonly args: JsonValue; readonly answer: SubCallAnswer }
  /** A `console.*` line of the script. */
  | { readonly kind: "log"; readonly level: LogLevel; readonly message: string }
  /** The script's output. */
  | { readonly kind: "run.completed"; readonly output: JsonValue }
  /** The run's error. */
  | { readonly kind: "run.failed"; readonly error: RunError }
  /** Someone cancelled the run; calls still in flight were abandoned. */
  | { readonly kind: "run.cancelled"; readonly reason: string }
  /** Direct tool mode (a session's journal): a tool table was bound, hidden from the model; `binding` is its id, `table` what rebuilds it. */
  | { readonly kind: "direct.bound"; readonly binding: string; readonly table: JsonValue }
  /**
   * Direct tool mode: a model tool call, by its call id (the model's tool call id hashed with the
   * session's labels), under a binding. A toolset call has `call`, its seq (its `call.*` entries
   * are in the same batch, after it); a call answered without being sent (direct mode's own tools,
   * an unknown or unloaded tool, a denial) has `answer`, the content the model got.
   */
  | {
      readonly kind: "direct.call";
      readonly callId: string;
      readonly toolCallId: string;
      readonly name: string;
      readonly binding: string;
      readonly call?: number;
      readonly answer?: JsonValue;
    }
  /** Direct tool mode: call `seq` waits for a human, signed with the binding it was asked under; it expires at `expiresAt`. */
  | {
      readonly kind: "direct.asked";
      readonly seq: number;
      readonly summary: string;
      readonly reason: string;
      readonly ruleId?: string;
      readonly signature: string;
      readonly expiresAt: number;
    }
  /** Direct tool mode: approving call `seq` approved its tool (`group.name`) for the rest of the session. */
  | { readonly kind: "direct.always"; readonly seq: number; readonly tool: string }
  /** Direct tool mode: nobody decided call `seq` before its approval expired; a rejection follows. */
  | { readonly kind: "direct.expired"; readonly seq: number };

export type JournalKind = JournalEvent["kind"];

export type Decision = "approved" | "rejected";

/** Why a call was parked; each is also the event a harness is told. */
export type ParkReason = "tool.schema_changed" | "credentials.expired";

/**
 * What a run waits for (its `waits`, while it is `waiting`, and its pending decisions at any time).
 * Each is an open call of the run, by `seq`: waits are primitive calls, so they are journaled,
 * replayed and forked like any other.
 */
export type RunWait =
  /** `sleep()` (or `setTimeout`): wakes at `until` (ms since the epoch). */
  | { readonly kind: "sleep"; readonly seq: number; readonly until: number }
  /** `signal(name)`: a `signal_run` (or a POST to one of the run's webhooks) with this name; `until` when it has a timeout. */
  | { readonly kind: "signal"; readonly seq: number; readonly name: string; readonly until?: number }
  /** A call whose policy requires approval: approve or reject it. `reason`: why it is asked, when its tool's approval rules say. */
  | { readonly kind: "approval"; readonly seq: number; readonly tool: string; readonly args: JsonValue; readonly reason?: string }
  /** A call held back by the engine: approve (send it against the current schema), reject, cancel or fork. */
  | {
      readonly kind: "parked";
      readonly seq: number;
      readonly tool: string;
      readonly args: JsonValue;
      readonly reason: ParkReason;
      readonly message: string;
      readonly credential?: string;
    }
  /** A call over its tool's rate limit (`onLimit: "wait"`): it tries to take a place in the window at `until`, then goes on; nothing was sent yet. */
  | { readonly kind: "rate_limit"; readonly seq: number; readonly tool: string; readonly until: number }
  /** `result()` of a workflow the run started: the child run `runId` must end (it may itself wait, for a signal this run sends it…). */
  | { readonly kind: "child"; readonly seq: number; readonly runId: string; readonly workflow: string }
  /**
   * A host tool's call that no worker has taken (the run is `running` meanwhile): a worker serving
   * `tool` must poll. `since`: when the attempt was queued; `lastPollAt`: when a worker that could
   * take it last polled (or, if none has, when the server began to watch). Nothing was sent yet.
   */
  | { readonly kind: "worker"; readonly seq: number; readonly tool: string; readonly since: number; readonly lastPollAt: number };

/** Waits that need a decision from the harness (approve or reject). */
export type DecisionWait = RunWait & { readonly kind: "approval" | "parked" };

export function needsDecision(wait: RunWait): wait is DecisionWait {
  return wait.kind === "approval" || wait.kind === "parked";
}

/**
 * The tool names of the primitives: the calls the engine itself answers (waits, webhooks,
 * workflows), in the reserved group `tapedeck`. (Built-in tools, such as `http.fetch`, are sent
 * to a tool source like any tool.)
 */
export const PrimitiveTool = {
  sleep: "tapedeck.sleep",
  signal: "tapedeck.signal",
  webhook: "tapedeck.webhook",
  /** `workflows.<name>.start(input)`: `{ name, input }` → `{ id }`, the child run (created once per call, also across crashes). */
  workflowStart: "tapedeck.workflow.start",
  /** `result()` of a started workflow: `{ name, id }` → its output, or a ToolError `workflow_failed`. */
  workflowResult: "tapedeck.workflow.result",
  /** `workflows.<name>.signal(id, signal, payload)`: `{ name, id, signal, payload }` → null, sent once. */
  workflowSignal: "tapedeck.workflow.signal",
} as const;
export type PrimitiveTool = (typeof PrimitiveTool)[keyof typeof PrimitiveTool];

/** Entries that settle a call: the script sees them, in journal order. */
export type OutcomeEntry = JournalEntry & { readonly kind: "call.completed" | "call.failed" | "call.rejected" };

export function isOutcome(entry: JournalEntry): entry is OutcomeEntry {
  return entry.kind === "call.completed" || entry.kind === "call.failed" || entry.kind === "call.rejected";
}
