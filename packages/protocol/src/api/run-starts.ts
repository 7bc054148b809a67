import type { Diagnostic } from "../diagnostic.js";
import type { JsonValue } from "../json.js";
import type { RunBudget } from "../run-budget.js";
import { diagnostic } from "./diagnostic.js";
import { anyJson, id, idempotencyKey, traceparent } from "./fields.js";
import { labels, namespace, type Labels } from "./labels.js";
import { run, type Run } from "./runs.js";
import { schemaFor } from "./schema-for.js";

/** The wire format of starting a run (`POST /v1/runs`) and forking one (`POST /v1/runs/:id/fork`). */

/** The `ttl` of a start or a fork: a duration ("30s", "10m", "2h", "30d") or milliseconds. */
export const ttl = {
  type: ["string", "integer"],
  minimum: 1,
  maxLength: 64,
  description:
    'How long the run may take: a duration ("30s", "10m", "2h", "30d") or milliseconds. A run that has not ended by then is cancelled. Default: none (a fork: its parent\'s).',
} as const;

/** `POST /v1/runs`. */
export interface StartRunRequest {
  readonly toolset: string;
  readonly source: string;
  /** Passed to the script's default export. Default null. */
  readonly input?: JsonValue;
  /** Added to the labels of the caller's key or token (which may not be contradicted). */
  readonly labels?: Labels;
  /** The end user the run belongs to. A key or token limited to a namespace sets it itself. */
  readonly namespace?: string;
  /**
   * Names this start (1 to 200 characters): starting again with a key a run of the same
   * namespace was started (or forked) with starts nothing and answers that run (`existing`),
   * even when the two requests race. The rest of the request is not compared.
   */
  readonly idempotencyKey?: string;
  /**
   * How long the run may take: a duration ("30s", "10m", "2h", "30d") or milliseconds. A run
   * that has not ended by then is cancelled ("expired: its ttl of 30d passed"). Default: none.
   */
  readonly ttl?: string | number;
  /** W3C trace context the run's calls join (the LLM call that wrote the script). Default: a trace of the run's own. */
  readonly traceparent?: string;
  /** This run's budget, field by field over the toolset's (and the engine's defaults): past it the run fails `budget_exceeded`. */
  readonly budget?: RunBudget;
}

/** A start's `budget` (checked in full by the engine, which names each wrong field). */
export const budget = {
  type: "object",
  description:
    'This run\'s budget: { "maxCalls": 500, "maxCallsPerTool": { "github.search": 50 }, "maxResultBytes": 10485760, "maxChildRuns": 20 }. Each field left out is the toolset\'s, else the server\'s default (5,000 calls, 256 MiB of results, 1,000 child runs).',
} as const;

export const startRunRequest = schemaFor<StartRunRequest>()({
  type: "object",
  properties: { toolset: id, source: { type: "string" }, input: anyJson, labels, namespace, idempotencyKey, ttl, traceparent, budget },
  required: ["toolset", "source"],
  additionalProperties: false,
});

/** `POST /v1/runs/:id/fork`: a new run with corrected code that reuses the parent's completed calls. */
export interface ForkRunRequest {
  readonly source: string;
  /** Default: the parent's input. */
  readonly input?: JsonValue;
  /** As for `POST /v1/runs`, in the parent's namespace. */
  readonly idempotencyKey?: string;
  /** As for `POST /v1/runs`. Default: the parent's ttl (measured from the fork's start). */
  readonly ttl?: string | number;
  /** As for `POST /v1/runs`. */
  readonly traceparent?: string;
}

export const forkRunRequest = schemaFor<ForkRunRequest>()({
  type: "object",
  properties: { source: { type: "string" }, input: anyJson, idempotencyKey, ttl, traceparent },
  required: ["source"],
  additionalProperties: false,
});

/**
 * `POST /v1/runs` and `POST /v1/runs/:id/fork` answer 201 with the new run, or 200 with the run
 * an `idempotencyKey` named already (`existing`).
 */
export interface StartedRun {
  readonly run: Run;
  /** The type-checker's warnings (errors refuse the script: 422 `script_refused`); none for an existing run. */
  readonly warnings: readonly Diagnostic[];
  /** True when the idempotency key named a run already: nothing was started. */
  readonly existing: boolean;
}

export const startedRun = schemaFor<StartedRun>()({
  type: "object",
  properties: {
    run,
    warnings: { type: "array", items: diagnostic },
    existing: { type: "boolean", description: "True (with 200) when the idempotencyKey named a run already: nothing was started." },
  },
  required: ["run", "warnings", "existing"],
});
