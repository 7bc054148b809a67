import type { JsonValue } from "../json.js";
import { RunStatus, type RunError, type RunWait } from "../run.js";
import { anyJson, id } from "./fields.js";
import { labels, namespace, type Labels } from "./labels.js";
import { LABELS, LIST_LIMIT, MAX_WAIT_SECONDS } from "./limits.js";
import { schemaFor } from "./schema-for.js";

/**
 * A run as the API shows it, and the routes that read runs (`GET /v1/runs`, `GET /v1/runs/:id`).
 * Times are milliseconds since the epoch, as in the journal.
 */

export const runStatus = { type: "string", enum: Object.values(RunStatus) } as const;

/** A run, as the API shows it. */
export interface Run {
  readonly id: string;
  /** The id of the toolset it runs against, for its whole life. */
  readonly toolset: string;
  readonly status: RunStatus;
  /** The model's TypeScript. */
  readonly source: string;
  readonly input: JsonValue;
  /** When `completed`. */
  readonly output?: JsonValue;
  /** When `failed`. */
  readonly error?: RunError;
  /** What it waits for while `waiting`; calls waiting for a decision, or for a worker (`worker`), at any time. */
  readonly waits?: readonly RunWait[];
  /** While `waiting`: when its earliest timer is due. */
  readonly wakeAt?: number;
  readonly labels: Labels;
  /** The end user the run belongs to. */
  readonly namespace?: string;
  /** The run this one was forked from. */
  readonly parent?: string;
  /** For a workflow's child run: the run that started it, and the `seq` of its `workflows.<name>.start` call. */
  readonly caller?: { readonly run: string; readonly seq: number };
  /** When the run is cancelled if it has not ended (its `ttl` passed). */
  readonly expiresAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Number of journal entries. */
  readonly journalLength: number;
  /** In a list only: the run's stored row cannot be read (why); only its id, toolset and times are its own. */
  readonly damaged?: string;
}

export const run = schemaFor<Run>()({
  type: "object",
  description: "A run. Times are milliseconds since the epoch.",
  properties: {
    id: { type: "string" },
    toolset: { type: "string" },
    status: runStatus,
    source: { type: "string" },
    input: anyJson,
    output: anyJson,
    error: { type: "object", description: "Why the run failed (kind, message, position, frame…)." },
    waits: { type: "array", items: { type: "object" }, description: "What the run waits for." },
    wakeAt: { type: "integer" },
    labels,
    namespace,
    parent: { type: "string" },
    caller: {
      type: "object",
      properties: { run: { type: "string" }, seq: { type: "integer" } },
      required: ["run", "seq"],
      description: "For a workflow's child run: the run that started it and the seq of its start call.",
    },
    expiresAt: { type: "integer", description: "When the run is cancelled if it has not ended (its ttl passed)." },
    createdAt: { type: "integer" },
    updatedAt: { type: "integer" },
    journalLength: { type: "integer" },
    damaged: {
      type: "string",
      description: "In a list only: the run's stored row cannot be read (why); only its id, toolset and times are its own. The other runs are listed as usual.",
    },
  },
  required: ["id", "toolset", "status", "source", "input", "labels", "createdAt", "updatedAt", "journalLength"],
});

/** `/v1/runs/:id/…`. */
export interface RunIdParams {
  readonly id: string;
}

export const runIdParams = schemaFor<RunIdParams>()({
  type: "object",
  properties: { id: { ...id, description: "A run id (`run_…`)." } },
  required: ["id"],
  additionalProperties: false,
});

/** The query string of `GET /v1/runs`. */
export interface RunListQuery {
  /** Runs in any of these states (repeat `status` for several). */
  readonly status?: RunStatus[];
  readonly namespace?: string;
  /** At most this many, newest first. Default 100, at most 500. */
  readonly limit?: number;
  /** `label.<key>=<value>`: only runs carrying every one of these labels. */
  readonly [label: `label.${string}`]: string;
}

export const runListQuery = schemaFor<RunListQuery>()({
  type: "object",
  properties: {
    status: { type: "array", items: runStatus },
    namespace,
    limit: { type: "integer", minimum: 1, maximum: LIST_LIMIT.max, description: `Default ${LIST_LIMIT.default}.` },
  },
  patternProperties: { "^label\\..+$": { type: "string", maxLength: LABELS.maxValueLength } },
  additionalProperties: false,
});

/** `GET /v1/runs`. */
export interface RunList {
  /** Newest first. */
  readonly runs: readonly Run[];
}

export const runList = schemaFor<RunList>()({ type: "object", properties: { runs: { type: "array", items: run } }, required: ["runs"] });

/** The query string of `GET /v1/runs/:id`. */
export interface GetRunQuery {
  /** Hold the answer up to this many seconds (at most 60) until the run ends or parks. Default 0. */
  readonly wait?: number;
  /** With `wait`: a run parked now is held until it wakes and next ends or parks. Default false. */
  readonly next?: boolean;
}

export const getRunQuery = schemaFor<GetRunQuery>()({
  type: "object",
  properties: { wait: { type: "integer", minimum: 0, maximum: MAX_WAIT_SECONDS }, next: { type: "boolean" } },
  additionalProperties: false,
});
