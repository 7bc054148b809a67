/**
 * The host tasks' rows, as both stores keep them (SQLite migration 17, and `pg-migrations.ts`):
 * one mapping between rows and `HostTaskRecord`s, so that a task reads back the same from either
 * store.
 * - `args` and `answer` are JSON text in both; `labels` and `toolsets` are JSON text in SQLite and
 *   jsonb in PostgreSQL (which pg hands back parsed): written as text either way (PostgreSQL casts
 *   them with `::jsonb`), read back from whichever the driver gives.
 * - `tool_group` is the part of the tool's path before the first dot (host tool groups are
 *   identifiers), kept so a poll for `group.*` is a column lookup.
 * - Absent optional fields are NULL, and absent (not undefined) when read back.
 */
import type { JsonValue } from "@tapedeck/protocol";
import type { HostTaskAnswer, HostTaskRecord, HostTaskState, NewHostTask } from "./host-task-store.js";

/** A row as either store reads it (PostgreSQL's also has `ord`, SQLite's `tool_group`: not needed to read a task). */
export interface HostTaskRow {
  readonly id: string;
  readonly run_id: string;
  readonly seq: number;
  readonly attempt: number;
  readonly tool: string;
  readonly args: string;
  readonly idempotency_key: string;
  readonly traceparent: string;
  readonly heartbeat_timeout_ms: number;
  readonly namespace: string | null;
  /** JSON text (SQLite) or parsed jsonb (PostgreSQL). */
  readonly labels: string | Readonly<Record<string, string>> | null;
  /** JSON text (SQLite) or parsed jsonb (PostgreSQL). */
  readonly toolsets: string | readonly string[];
  readonly waiter: string;
  readonly state: string;
  readonly lease: string | null;
  readonly lease_until: number | null;
  readonly answer: string | null;
  readonly created_at: number;
}

/** The columns a new task is written with, in the order of PostgreSQL's inserts ($1 … $15); JSON as text. */
export const NEW_TASK_COLUMNS = [
  "id",
  "run_id",
  "seq",
  "attempt",
  "tool",
  "tool_group",
  "args",
  "idempotency_key",
  "traceparent",
  "heartbeat_timeout_ms",
  "namespace",
  "labels",
  "toolsets",
  "waiter",
  "created_at",
] as const;

export type NewTaskColumns = { readonly [C in (typeof NEW_TASK_COLUMNS)[number]]: string | number | null };

export function newTaskColumns(task: NewHostTask): NewTaskColumns {
  return {
    id: task.id,
    run_id: task.runId,
    seq: task.seq,
    attempt: task.attempt,
    tool: task.tool,
    tool_group: toolGroupOf(task.tool),
    args: JSON.stringify(task.args),
    idempotency_key: task.idempotencyKey,
    traceparent: task.traceparent,
    heartbeat_timeout_ms: task.heartbeatTimeoutMs,
    namespace: task.audience.namespace ?? null,
    labels: task.audience.labels === undefined ? null : JSON.stringify(task.audience.labels),
    toolsets: JSON.stringify(task.audience.toolsets),
    waiter: task.waiter,
    created_at: task.createdAt,
  };
}

/** The group of a tool path: host tool groups are identifiers, so the part before the first dot. */
export function toolGroupOf(tool: string): string {
  const dot = tool.indexOf(".");
  return dot < 0 ? tool : tool.slice(0, dot);
}

export function taskFromRow(row: HostTaskRow): HostTaskRecord {
  return {
    id: row.id,
    runId: row.run_id,
    seq: row.seq,
    attempt: row.attempt,
    tool: row.tool,
    args: JSON.parse(row.args) as JsonValue,
    idempotencyKey: row.idempotency_key,
    traceparent: row.traceparent,
    heartbeatTimeoutMs: row.heartbeat_timeout_ms,
    audience: {
      ...(row.namespace !== null && { namespace: row.namespace }),
      ...(row.labels !== null && { labels: jsonColumn(row.labels) }),
      toolsets: jsonColumn(row.toolsets),
    },
    waiter: row.waiter,
    createdAt: row.created_at,
    // The store wrote the state itself, from `HostTaskState`.
    state: row.state as HostTaskState,
    ...(row.lease !== null && { lease: row.lease }),
    ...(row.lease_until !== null && { leaseUntil: row.lease_until }),
    ...(row.answer !== null && { answer: JSON.parse(row.answer) as HostTaskAnswer }),
  };
}

/** A JSON column's value: SQLite gives its text, pg gives jsonb parsed. */
function jsonColumn<T>(value: string | T): T {
  return typeof value === "string" ? (JSON.parse(value) as T) : value;
}
