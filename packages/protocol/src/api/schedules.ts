import type { JsonValue } from "../json.js";
import { anyJson, id } from "./fields.js";
import { LABELS } from "./limits.js";
import { labels, namespace, type Labels } from "./labels.js";
import { ttl } from "./run-starts.js";
import { schemaFor } from "./schema-for.js";

/**
 * The wire format of schedules (`/v1/schedules`): a workflow or a script started on a cron
 * expression or an interval, in an IANA time zone, under overlap and catch-up policies. Each
 * fire's run carries the schedule's labels and namespace, and the label `tapedeck.schedule`
 * set to the schedule's id (list them with `GET /v1/runs?label.tapedeck.schedule=<id>`).
 */

/** Schedules per page of a list: default and most. */
export const SCHEDULES_LIMIT = { default: 100, max: 500 } as const;
/** Fires per page of a schedule's fire log: default and most. */
export const FIRES_LIMIT = { default: 50, max: 500 } as const;

export type OverlapPolicy = "skip" | "buffer_one" | "allow" | "cancel_previous";
export type CatchupPolicy = "latest" | "all" | "none";
export type FireKind = "scheduled" | "trigger" | "backfill";
export type FireState = "claimed" | "buffered" | "started" | "skipped" | "failed";

const OVERLAPS: readonly OverlapPolicy[] = ["skip", "buffer_one", "allow", "cancel_previous"];
const CATCHUPS: readonly CatchupPolicy[] = ["latest", "all", "none"];

/** A duration ("30s", "10m", "2h", "30d") or milliseconds. */
const duration = { type: ["string", "integer"], minimum: 0, maxLength: 64 } as const;
const time = { type: "integer", minimum: 0, description: "ms since the epoch." } as const;

/** `POST /v1/schedules`. */
export interface CreateScheduleRequest {
  /** The toolset the runs start on. */
  readonly toolset: string;
  /** Start this workflow pinned by the toolset (`workflows.<name>`); its input is checked against its schema. Exactly one of `workflow` and `source`. */
  readonly workflow?: string;
  /** Or this script (TypeScript); it must type-check. */
  readonly source?: string;
  /** Each run's input. Default null. */
  readonly input?: JsonValue;
  /** A cron expression (5 fields, or 6 with seconds first), read in `timezone`. Exactly one of `cron` and `every`. */
  readonly cron?: string;
  /** Or a fixed interval: a duration ("15m") or milliseconds, at least 1 s, counted from `startAt` (else the creation). */
  readonly every?: string | number;
  /** The IANA zone of the cron expression ("Europe/Berlin"). Default "UTC". */
  readonly timezone?: string;
  /** No fire before this time, ms since the epoch. Default: from now. */
  readonly startAt?: number;
  /** No fire at or after this time, ms since the epoch. Default: none. */
  readonly endAt?: number;
  /** At most this many scheduled fires (triggers and backfills not counted). Default: no limit. */
  readonly maxFires?: number;
  /** What a fire does while a run of the schedule has not ended. Default "skip". */
  readonly overlap?: OverlapPolicy;
  /** Which fires missed while no server fired start: the latest, all of them (oldest first), or none. Default "latest". */
  readonly catchup?: CatchupPolicy;
  /** Missed fires older than this never start: a duration or milliseconds. Default 365 days. */
  readonly catchupWindow?: string | number;
  /** Each run's labels, added to the caller's own (which may not be contradicted). */
  readonly labels?: Labels;
  /** The end user the runs belong to. A key limited to a namespace sets it itself. */
  readonly namespace?: string;
  /** Each run's TTL, as for `POST /v1/runs`. Default: none. */
  readonly ttl?: string | number;
  /** Created paused (no fire until resumed). Default false. */
  readonly paused?: boolean;
  /** For whoever reads the schedule, at most 1,000 characters. */
  readonly note?: string;
}

export const createScheduleRequest = schemaFor<CreateScheduleRequest>()({
  type: "object",
  properties: {
    toolset: id,
    workflow: { type: "string", minLength: 1, maxLength: 200 },
    source: { type: "string" },
    input: anyJson,
    cron: { type: "string", minLength: 1, maxLength: 200, description: 'A cron expression: "0 9 * * 1-5", or 6 fields with seconds first.' },
    every: { ...duration, description: 'A fixed interval: "15m", "1h", or ms (at least 1 s).' },
    timezone: { type: "string", minLength: 1, maxLength: 100, description: 'An IANA zone. Default "UTC".' },
    startAt: time,
    endAt: time,
    maxFires: { type: "integer", minimum: 1 },
    overlap: { type: "string", enum: OVERLAPS, description: "Default skip." },
    catchup: { type: "string", enum: CATCHUPS, description: "Default latest." },
    catchupWindow: { ...duration, description: "Missed fires older than this never start. Default 365d." },
    labels,
    namespace,
    ttl,
    paused: { type: "boolean" },
    note: { type: "string", maxLength: 1000 },
  },
  required: ["toolset"],
  additionalProperties: false,
});

/** A schedule as the API shows it. */
export interface Schedule {
  /** `sch_…`. */
  readonly id: string;
  readonly toolset: string;
  readonly workflow?: string;
  readonly source?: string;
  readonly input: JsonValue;
  readonly cron?: string;
  readonly everyMs?: number;
  readonly timezone: string;
  readonly startAt?: number;
  readonly endAt?: number;
  readonly maxFires?: number;
  readonly overlap: OverlapPolicy;
  readonly catchup: CatchupPolicy;
  readonly catchupWindowMs: number;
  /** The labels each run carries (besides `tapedeck.schedule`). */
  readonly labels: Labels;
  readonly namespace?: string;
  readonly ttlMs?: number;
  readonly note?: string;
  readonly paused: boolean;
  /** The next scheduled fire time; absent once there is none (end date or count reached). */
  readonly nextFireAt?: number;
  /** The next fire times, up to five, ms since the epoch; empty when paused or done. */
  readonly upcoming: readonly number[];
  /** Scheduled fires so far. */
  readonly fireCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const schedule = schemaFor<Schedule>()({
  type: "object",
  properties: {
    id: { type: "string" },
    toolset: { type: "string" },
    workflow: { type: "string" },
    source: { type: "string" },
    input: anyJson,
    cron: { type: "string" },
    everyMs: { type: "integer" },
    timezone: { type: "string" },
    startAt: { type: "integer" },
    endAt: { type: "integer" },
    maxFires: { type: "integer" },
    overlap: { type: "string", enum: OVERLAPS },
    catchup: { type: "string", enum: CATCHUPS },
    catchupWindowMs: { type: "integer" },
    labels,
    namespace: { type: "string" },
    ttlMs: { type: "integer" },
    note: { type: "string" },
    paused: { type: "boolean" },
    nextFireAt: { type: "integer" },
    upcoming: { type: "array", items: { type: "integer" } },
    fireCount: { type: "integer" },
    createdAt: { type: "integer" },
    updatedAt: { type: "integer" },
  },
  required: [
    "id",
    "toolset",
    "input",
    "timezone",
    "overlap",
    "catchup",
    "catchupWindowMs",
    "labels",
    "paused",
    "upcoming",
    "fireCount",
    "createdAt",
    "updatedAt",
  ],
});

/** `GET /v1/schedules`. */
export interface ScheduleList {
  /** Oldest first. */
  readonly schedules: readonly Schedule[];
  /** The `after` of the next page, when this one is full. */
  readonly next?: string;
}

export const scheduleList = schemaFor<ScheduleList>()({
  type: "object",
  properties: { schedules: { type: "array", items: schedule }, next: { type: "string" } },
  required: ["schedules"],
});

/** The query string of `GET /v1/schedules`. */
export interface ScheduleListQuery {
  readonly namespace?: string;
  /** At most this many, oldest first. Default 100, at most 500. */
  readonly limit?: number;
  /** Only schedules created after this one (the previous page's `next`). */
  readonly after?: string;
  /** `label.<key>=<value>`: only schedules carrying every one of these labels. */
  readonly [label: `label.${string}`]: string;
}

export const scheduleListQuery = schemaFor<ScheduleListQuery>()({
  type: "object",
  properties: {
    namespace,
    limit: { type: "integer", minimum: 1, maximum: SCHEDULES_LIMIT.max, description: `Default ${SCHEDULES_LIMIT.default}.` },
    after: id,
  },
  patternProperties: { "^label\\..+$": { type: "string", maxLength: LABELS.maxValueLength } },
  additionalProperties: false,
});

/** `/v1/schedules/:id/…`. */
export interface ScheduleParams {
  readonly id: string;
}

export const scheduleParams = schemaFor<ScheduleParams>()({
  type: "object",
  properties: { id: { ...id, description: "A schedule id (`sch_…`)." } },
  required: ["id"],
  additionalProperties: false,
});

/** One fire of a schedule: when, why, and what became of it. */
export interface Fire {
  readonly scheduleId: string;
  /** The fire's time (its run's idempotency key is derived from it), ms since the epoch. */
  readonly fireAt: number;
  /** Due by the timing, asked for now (trigger), or for a past time (backfill). */
  readonly kind: FireKind;
  /** Claimed (not started yet), buffered (waits for a run to end: overlap buffer_one), started, skipped (the overlap policy), failed (could not start). */
  readonly state: FireState;
  /** The run it started. */
  readonly runId?: string;
  /** Why it was skipped, buffered or failed. */
  readonly reason?: string;
}

export const fire = schemaFor<Fire>()({
  type: "object",
  properties: {
    scheduleId: { type: "string" },
    fireAt: { type: "integer" },
    kind: { type: "string", enum: ["scheduled", "trigger", "backfill"] },
    state: { type: "string", enum: ["claimed", "buffered", "started", "skipped", "failed"] },
    runId: { type: "string" },
    reason: { type: "string" },
  },
  required: ["scheduleId", "fireAt", "kind", "state"],
});

/** `GET /v1/schedules/:id/fires` and `POST /v1/schedules/:id/backfill`. */
export interface FireList {
  /** The log: newest first. A backfill: oldest first. */
  readonly fires: readonly Fire[];
}

export const fireList = schemaFor<FireList>()({ type: "object", properties: { fires: { type: "array", items: fire } }, required: ["fires"] });

/** The query string of `GET /v1/schedules/:id/fires`. */
export interface FiresQuery {
  /** Default 50, at most 500. */
  readonly limit?: number;
  /** Only fires before this time (the last fire's `fireAt` of the previous page). */
  readonly before?: number;
}

export const firesQuery = schemaFor<FiresQuery>()({
  type: "object",
  properties: { limit: { type: "integer", minimum: 1, maximum: FIRES_LIMIT.max, description: `Default ${FIRES_LIMIT.default}.` }, before: time },
  additionalProperties: false,
});

/** `POST /v1/schedules/:id/backfill`: fire each of the schedule's times in [from, to) that has no fire yet. */
export interface BackfillRequest {
  /** ms since the epoch. */
  readonly from: number;
  /** ms since the epoch; not after now. */
  readonly to: number;
}

export const backfillRequest = schemaFor<BackfillRequest>()({
  type: "object",
  properties: { from: time, to: time },
  required: ["from", "to"],
  additionalProperties: false,
});
