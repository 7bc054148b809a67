import type { JsonValue } from "./json.js";
import type { ToolFailure } from "./failure.js";
import type { Decision, RunError, RunWait } from "./run.js";

/** Where a test run's call got its answer. */
export type TestAnswerSource =
  /** A recorded call (a cassette, `from_run`) with the same tool and arguments. */
  | "recorded"
  /** The scenario's mock of the tool. */
  | "mock"
  /** Nothing answered it: the call failed `no_mock`. */
  | "none"
  /** A primitive (sleep, signal, webhook, workflows), answered by the engine in virtual time. (The wire value predates the word.) */
  | "builtin"
  /** Refused before sending (its arguments did not fit the schema). */
  | "rejected"
  /** A tool of the built-in library that computes its answer (echo, time on the virtual clock, json; web.fetch over a mocked http.fetch), run for real. */
  | "library";

/** What a test run did (`test_script`, `POST /v1/test`). Times are virtual ms since the test started. */
export interface TestReport {
  /** `waiting`: the run waits for something the scenario does not bring (`waits` says what). */
  readonly status: "completed" | "failed" | "cancelled" | "waiting";
  readonly output?: JsonValue;
  readonly error?: RunError;
  readonly waits?: readonly RunWait[];
  readonly calls: readonly TestCall[];
  readonly logs: readonly { readonly atMs: number; readonly level: string; readonly message: string }[];
  readonly virtualMs: number;
}

/** One call of a test run. */
export interface TestCall {
  readonly seq: number;
  readonly tool: string;
  readonly args: JsonValue;
  readonly atMs: number;
  readonly answeredBy: TestAnswerSource;
  readonly decision?: Decision;
  readonly endedAtMs?: number;
  readonly result?: JsonValue;
  readonly error?: ToolFailure;
}
