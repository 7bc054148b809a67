import type { FireKind, FireRecord, FireState, ScheduleRecord } from "./schedule-store.js";

/**
 * Schedules and fires as rows, the same on SQLite and PostgreSQL: what the firing reads and
 * claims in columns, the rest as one JSON body. (PostgreSQL answers bigint as strings: `Number`.)
 */

export interface ScheduleRow {
  readonly id: string;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly body: string;
  readonly paused: number | boolean | string;
  readonly next_fire_at: number | string | null;
  readonly fire_count: number | string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

export interface FireRow {
  readonly schedule_id: string;
  readonly fire_at: number | string;
  readonly kind: string;
  readonly state: string;
  readonly run_id: string | null;
  readonly reason: string | null;
  readonly held_by: string;
  readonly claimed_at: number | string;
  readonly updated_at: number | string;
}

type ScheduleBody = Pick<ScheduleRecord, "timing" | "action" | "policies" | "note">;

export function scheduleToRow(schedule: ScheduleRecord): ScheduleRow {
  const body: ScheduleBody = {
    timing: schedule.timing,
    action: schedule.action,
    policies: schedule.policies,
    ...(schedule.note === undefined ? {} : { note: schedule.note }),
  };
  return {
    id: schedule.id,
    namespace: schedule.namespace ?? null,
    labels: schedule.labels === undefined ? null : JSON.stringify(schedule.labels),
    body: JSON.stringify(body),
    paused: schedule.paused ? 1 : 0,
    next_fire_at: schedule.nextFireAt ?? null,
    fire_count: schedule.fireCount,
    created_at: schedule.createdAt,
    updated_at: schedule.updatedAt,
  };
}

export function scheduleFromRow(row: ScheduleRow): ScheduleRecord {
  const body = JSON.parse(row.body) as ScheduleBody;
  return {
    id: row.id,
    timing: body.timing,
    action: body.action,
    policies: body.policies,
    ...(body.note === undefined ? {} : { note: body.note }),
    ...(row.labels === null ? {} : { labels: JSON.parse(row.labels) as Record<string, string> }),
    ...(row.namespace === null ? {} : { namespace: row.namespace }),
    paused: row.paused === true || Number(row.paused) === 1,
    ...(row.next_fire_at === null ? {} : { nextFireAt: Number(row.next_fire_at) }),
    fireCount: Number(row.fire_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export function fireFromRow(row: FireRow): FireRecord {
  return {
    scheduleId: row.schedule_id,
    fireAt: Number(row.fire_at),
    kind: row.kind as FireKind,
    state: row.state as FireState,
    ...(row.run_id === null ? {} : { runId: row.run_id }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    heldBy: row.held_by,
    claimedAt: Number(row.claimed_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Whether a schedule carries every one of `labels`. (Schedules are few: filtered after reading.) */
export function hasLabels(schedule: ScheduleRecord, labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(labels ?? {}).every(([key, value]) => schedule.labels?.[key] === value);
}
