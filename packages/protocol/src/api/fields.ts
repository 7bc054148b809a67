import { schemaFor } from "./schema-for.js";

/** Schemas of fields that many requests and answers share. */

/** Any JSON value. */
export const anyJson = {} as const;

/** An id of something the server made (a run, a toolset, a task): opaque, never empty. */
export const id = { type: "string", minLength: 1, maxLength: 200 } as const;

/** A JSON Schema, as a request gives one (an object, or `true`/`false`); the engine compiles it. */
export const jsonSchema = { type: ["object", "boolean"] } as const;

/** W3C trace context a run's calls join (`00-<trace id>-<parent id>-<flags>`). */
export const traceparent = {
  type: "string",
  pattern: "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$",
  description: "W3C trace context (the LLM call that wrote the script): the run's calls carry its trace id.",
} as const;

/** Names a start or a fork (an agent's: a hash of its labels and the model's tool call id). */
export const idempotencyKey = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description:
    "Starting again with a key a run of the same namespace was started or forked with starts nothing: the answer is that run (200, `existing: true`).",
} as const;

/** The answer of a `DELETE` that removed what it named. */
export interface Deleted {
  readonly deleted: true;
}

export const deleted = schemaFor<Deleted>()({ type: "object", properties: { deleted: { type: "boolean" } }, required: ["deleted"] });
