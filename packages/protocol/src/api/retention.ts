import { schemaFor } from "./schema-for.js";

/** `POST /v1/runs/purge` (an unlimited API key only): deletes the runs that ended before a time. */
export interface PurgeRunsRequest {
  /** An ISO 8601 time ("2026-01-31T00:00:00Z"), or how long ago ("30d", "12h"). Never in the future. */
  readonly before: string;
  /** Count what would be deleted, delete nothing. Default false. */
  readonly dryRun?: boolean;
}

export const purgeRunsRequest = schemaFor<PurgeRunsRequest>()({
  type: "object",
  properties: {
    before: { type: "string", minLength: 1, maxLength: 64, description: 'An ISO 8601 time, or a duration back from now ("30d").' },
    dryRun: { type: "boolean", description: "Count, delete nothing. Default false." },
  },
  required: ["before"],
  additionalProperties: false,
});

/** What a purge deleted (or, for a dry run, would delete). */
export interface PurgedRuns {
  /** The time it purged before, ms since the epoch. */
  readonly before: number;
  readonly dryRun: boolean;
  /** Runs deleted, whole (journal, signals, events, blobs, run credentials). */
  readonly runs: number;
  /** Direct sessions deleted (unused since `before`, none of their calls waiting for a decision). */
  readonly sessions: number;
  readonly journalEntries: number;
  /** Webhook deliveries made before `before` and no longer pending, deleted. */
  readonly deliveries: number;
  /** Commits it took (0 for a dry run). */
  readonly batches: number;
}

export const purgedRuns = schemaFor<PurgedRuns>()({
  type: "object",
  properties: {
    before: { type: "integer" },
    dryRun: { type: "boolean" },
    runs: { type: "integer" },
    sessions: { type: "integer" },
    journalEntries: { type: "integer" },
    deliveries: { type: "integer" },
    batches: { type: "integer" },
  },
  required: ["before", "dryRun", "runs", "sessions", "journalEntries", "deliveries", "batches"],
});
