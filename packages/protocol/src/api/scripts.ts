import type { Diagnostic } from "../diagnostic.js";
import type { JsonValue } from "../json.js";
import type { TestReport } from "../test-report.js";
import { diagnostic } from "./diagnostic.js";
import { anyJson, id } from "./fields.js";
import { schemaFor } from "./schema-for.js";

/** The wire format of the script routes that run nothing for real: `POST /v1/check` and `POST /v1/test`. */

/** `POST /v1/check`. */
export interface CheckRequest {
  readonly toolset: string;
  readonly source: string;
}

export const checkRequest = schemaFor<CheckRequest>()({
  type: "object",
  properties: { toolset: id, source: { type: "string" } },
  required: ["toolset", "source"],
  additionalProperties: false,
});

/** `POST /v1/check` answers 200 whether or not the script type-checks. */
export interface CheckResult {
  /** True when the script may run (`diagnostics` then holds warnings only). */
  readonly ok: boolean;
  readonly diagnostics: readonly Diagnostic[];
}

export const checkResult = schemaFor<CheckResult>()({
  type: "object",
  properties: { ok: { type: "boolean" }, diagnostics: { type: "array", items: diagnostic } },
  required: ["ok", "diagnostics"],
});

/** `POST /v1/test`: runs a script against mocks in virtual time (`test_script`); nothing is sent to a tool and no run is kept. */
export interface TestRequest {
  readonly toolset: string;
  readonly source: string;
  /** Passed to the script's default export. Default null. */
  readonly input?: JsonValue;
  /**
   * What the mocked world answers, and when (the scenario format of the README), or a cassette.
   * `from_run`: a run (in the caller's scope) whose recorded calls answer first. Default: no mocks.
   */
  readonly scenario?: Readonly<Record<string, unknown>>;
}

export const testRequest = schemaFor<TestRequest>()({
  type: "object",
  properties: {
    toolset: id,
    source: { type: "string" },
    input: anyJson,
    scenario: {
      type: "object",
      description: "A scenario document (see the README) or a cassette.",
      properties: { from_run: { ...id, description: "A run (in the caller's scope) whose recorded calls answer first." } },
    },
  },
  required: ["toolset", "source"],
  additionalProperties: false,
});

/** `POST /v1/test` answers: what the test run did (`TestReport`, `TestCall` of @tapedeck/protocol). */
export type { TestCall, TestReport } from "../test-report.js";

export const testReport = schemaFor<TestReport>()({
  type: "object",
  description: "What the test run did. Times are virtual ms since the test started.",
  properties: {
    status: { type: "string", enum: ["completed", "failed", "cancelled", "waiting"] },
    output: anyJson,
    error: { type: "object" },
    waits: { type: "array", items: { type: "object" }, description: "When `waiting`: what nothing in the scenario brings." },
    calls: {
      type: "array",
      items: { type: "object" },
      description: "Every call: tool, args, virtual times, where its answer came from (`answeredBy`), its result or error.",
    },
    logs: { type: "array", items: { type: "object" } },
    virtualMs: { type: "integer" },
  },
  required: ["status", "calls", "logs", "virtualMs"],
});
