// The route schemas carry OpenAPI fields (summary, tags, security): @fastify/swagger declares them on FastifySchema.
import type {} from "@fastify/swagger";
import { RunStatus } from "@tapedeck/protocol";
import { LABELS, NAMESPACE_MAX_LENGTH } from "./limits.js";

/**
 * JSON Schema fragments shared by the routes. They validate requests (see `validation.ts`)
 * and document answers in `GET /openapi.json`; answers are serialised with plain
 * `JSON.stringify`, so a response schema never drops or reshapes a field.
 */

/** Any JSON value. */
export const anyJson = {} as const;

export const labels = {
  type: "object",
  description: "Labels: string keys and values.",
  maxProperties: LABELS.maxCount,
  propertyNames: { minLength: 1, maxLength: LABELS.maxKeyLength },
  additionalProperties: { type: "string", maxLength: LABELS.maxValueLength },
} as const;

export const namespace = { type: "string", minLength: 1, maxLength: NAMESPACE_MAX_LENGTH, description: "An end user's id." } as const;

export const id = { type: "string", minLength: 1, maxLength: 200 } as const;

/** A JSON Schema, as a request gives one (an object, or `true`/`false`); the engine compiles it. */
export const jsonSchema = { type: ["object", "boolean"] } as const;

/** Names a start or a fork (an agent's: a hash of its labels and the model's tool call id). */
/** W3C trace context a run's calls join (`00-<trace id>-<parent id>-<flags>`). */
export const traceparent = {
  type: "string",
  pattern: "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$",
  description: "W3C trace context (the LLM call that wrote the script): the run's calls carry its trace id.",
} as const;

export const idempotencyKey = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description:
    "Starting again with a key a run of the same namespace was started or forked with starts nothing: the answer is that run (200, `existing: true`).",
} as const;

export const runStatus = { type: "string", enum: Object.values(RunStatus) } as const;

export const runIdParams = {
  type: "object",
  properties: { id: { ...id, description: "A run id (`run_…`)." } },
  required: ["id"],
  additionalProperties: false,
} as const;

export const diagnostic = {
  type: "object",
  properties: {
    line: { type: "integer" },
    column: { type: "integer" },
    code: { type: ["integer", "string"] },
    category: { type: "string", enum: ["error", "warning"] },
    message: { type: "string" },
    frame: { type: "string" },
  },
} as const;

export const declarations = {
  type: "object",
  properties: {
    typescript: { type: "string", description: "A .d.ts module for a type-checker." },
    prompt: { type: "string", description: "One line per tool, for a prompt." },
  },
} as const;

export const run = {
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
} as const;

export const errorBody = {
  type: "object",
  properties: {
    error: {
      type: "object",
      properties: { code: { type: "string" }, message: { type: "string" }, diagnostics: { type: "array", items: diagnostic } },
    },
  },
} as const;

/** The error answers a route documents, by status. */
export function errors(...statuses: number[]): Record<number, typeof errorBody> {
  return Object.fromEntries(statuses.map((status) => [status, errorBody]));
}
