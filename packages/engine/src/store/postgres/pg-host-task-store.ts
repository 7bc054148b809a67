/**
 * The host task queue in the PostgreSQL store's database, written through its group commit.
 *
 * Invariants:
 * - A claim picks its tasks with `SELECT … FOR UPDATE SKIP LOCKED` and updates them in the same
 *   statement: concurrent claims of every node skip each other's rows, so no task is claimed
 *   twice and no claim waits for another. The whole filter (tools, namespace, labels, toolset)
 *   is in SQL, so `LIMIT` counts only tasks the poll may take.
 * - State changes are conditional updates (`WHERE state = … AND lease = …`): of two nodes
 *   answering, lapsing or withdrawing one task, the second finds the row changed and does nothing.
 * - Notifications are published only after the commit that made them true.
 * - `(run_id, seq, attempt)` is unique: an attempt is queued once, whichever node queues it.
 */
import {
  HOST_TASKS_TOPIC,
  hostTaskWaiterTopic,
  type HostTaskAnswer,
  type HostTaskFilter,
  type HostTaskRecord,
  type HostTaskState,
  type HostTaskStore,
  type LeaseAnswer,
  type NewHostTask,
  type StagedHostTask,
} from "../host-task-store.js";
import { NEW_TASK_COLUMNS, newTaskColumns, taskFromRow, type HostTaskRow } from "../host-task-rows.js";
import type { Notifier } from "../notifier.js";
import type { PgAccess, PgTransaction } from "./pg-access.js";

/** A row as read: `ord` orders claims and lists. */
type TaskRow = HostTaskRow & { readonly ord: number };

const DEFAULT_LIST_LIMIT = 100;

const COLUMNS =
  "ord, id, run_id, seq, attempt, tool, args, idempotency_key, traceparent, heartbeat_timeout_ms, namespace, labels, toolsets, waiter, state, lease, lease_until, answer, created_at";

export class PgHostTaskStore implements HostTaskStore {
  readonly #access: PgAccess;
  readonly #notifier: Notifier;

  constructor(access: PgAccess, notifier: Notifier) {
    this.#access = access;
    this.#notifier = notifier;
  }

  async enqueue(task: NewHostTask): Promise<HostTaskRecord> {
    const values = taskValues(task);
    const { created, stored } = await this.#access.write(async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO host_tasks (id, run_id, seq, attempt, tool, tool_group, args, idempotency_key, traceparent, heartbeat_timeout_ms,
           namespace, labels, toolsets, waiter, state, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13::jsonb, $14, 'queued', $15)
         ON CONFLICT (run_id, idempotency_key, attempt) DO NOTHING`,
        values,
      );
      // The attempt's task, now waited for by this waiter (the same row when it was just queued).
      const [row] = (
        await tx.query<TaskRow>(`UPDATE host_tasks SET waiter = $4 WHERE run_id = $1 AND idempotency_key = $2 AND attempt = $3 RETURNING ${COLUMNS}`, [
          task.runId,
          task.idempotencyKey,
          task.attempt,
          task.waiter,
        ])
      ).rows;
      if (!row) throw new Error(`host task ${task.idempotencyKey} attempt ${task.attempt} was neither queued nor found`);
      // Only the latest attempt of a call stands: a claimed earlier one is withdrawn, the rest deleted.
      await tx.query("UPDATE host_tasks SET state = 'withdrawn' WHERE run_id = $1 AND idempotency_key = $2 AND attempt <> $3 AND state = 'claimed'", [
        task.runId,
        task.idempotencyKey,
        task.attempt,
      ]);
      await tx.query("DELETE FROM host_tasks WHERE run_id = $1 AND idempotency_key = $2 AND attempt <> $3 AND state IN ('queued', 'answered', 'lapsed')", [
        task.runId,
        task.idempotencyKey,
        task.attempt,
      ]);
      return { created: inserted.rowCount === 1, stored: taskFromRow(row) };
    });
    if (created) this.#notifier.publish(HOST_TASKS_TOPIC);
    return stored;
  }

  async claim(filter: HostTaskFilter, max: number, now: number): Promise<HostTaskRecord[]> {
    if (filter.tools.length === 0 || max <= 0) return [];
    const { where, values } = filterSql(filter, ["queued"]);
    values.push(max, now);
    const n = values.length;
    const claimed = await this.#access.write(async (tx) =>
      (
        await tx.query<TaskRow>(
          `WITH chosen AS (SELECT id FROM host_tasks WHERE ${where} ORDER BY ord LIMIT $${n - 1} FOR UPDATE SKIP LOCKED)
           UPDATE host_tasks t SET state = 'claimed', lease = replace(gen_random_uuid()::text, '-', ''), lease_until = $${n} + t.heartbeat_timeout_ms
           FROM chosen WHERE t.id = chosen.id
           RETURNING ${prefixed("t")}`,
          values,
        )
      ).rows
        .sort((a, b) => a.ord - b.ord)
        .map(taskFromRow),
    );
    this.#tellWaiters(claimed);
    return claimed;
  }

  async release(taskId: string, lease: string): Promise<void> {
    const released = await this.#access.write(
      async (tx) =>
        (
          await tx.query("UPDATE host_tasks SET state = 'queued', lease = NULL, lease_until = NULL WHERE id = $1 AND lease = $2 AND state = 'claimed'", [
            taskId,
            lease,
          ])
        ).rowCount === 1,
    );
    if (released) this.#notifier.publish(HOST_TASKS_TOPIC);
  }

  heartbeat(taskId: string, lease: string, now: number): Promise<LeaseAnswer> {
    return this.#access.write(async (tx) => {
      const extended = await tx.query("UPDATE host_tasks SET lease_until = $3 + heartbeat_timeout_ms WHERE id = $1 AND lease = $2 AND state = 'claimed'", [
        taskId,
        lease,
        now,
      ]);
      if (extended.rowCount === 1) return "ok";
      const [row] = (await tx.query<{ state: string }>("SELECT state FROM host_tasks WHERE id = $1 AND lease = $2", [taskId, lease])).rows;
      return row?.state === "withdrawn" ? "cancelled" : "lost";
    });
  }

  async answer(taskId: string, lease: string, outcome: HostTaskAnswer, _now: number): Promise<LeaseAnswer> {
    const body = JSON.stringify(outcome);
    const { answer, waiter } = await this.#access.write(async (tx): Promise<{ answer: LeaseAnswer; waiter?: string }> => {
      const [row] = (
        await tx.query<{ state: string; waiter: string }>(
          "SELECT state, waiter FROM host_tasks WHERE id = $1 AND lease = $2 AND state IN ('claimed', 'withdrawn') FOR UPDATE",
          [taskId, lease],
        )
      ).rows;
      if (!row) return { answer: "lost" };
      if (row.state === "withdrawn") {
        // Nobody wants it: the worker is told, and the task is done with.
        await tx.query("DELETE FROM host_tasks WHERE id = $1", [taskId]);
        return { answer: "cancelled" };
      }
      await tx.query("UPDATE host_tasks SET state = 'answered', answer = $2, lease = NULL, lease_until = NULL WHERE id = $1", [taskId, body]);
      return { answer: "ok", waiter: row.waiter };
    });
    if (waiter !== undefined) this.#notifier.publish(hostTaskWaiterTopic(waiter));
    return answer;
  }

  withdraw(taskId: string): Promise<void> {
    return this.#access.write(async (tx) => {
      const deleted = await tx.query("DELETE FROM host_tasks WHERE id = $1 AND state IN ('queued', 'answered', 'lapsed')", [taskId]);
      if (deleted.rowCount === 0) await tx.query("UPDATE host_tasks SET state = 'withdrawn' WHERE id = $1 AND state = 'claimed'", [taskId]);
    });
  }

  async expire(now: number): Promise<HostTaskRecord[]> {
    const lapsed = await this.#access.write(async (tx) => {
      // No worker will report these now.
      await tx.query("DELETE FROM host_tasks WHERE state = 'withdrawn' AND lease_until <= $1", [now]);
      const rows = (
        await tx.query<TaskRow>(
          `UPDATE host_tasks SET state = 'lapsed', lease = NULL, lease_until = NULL WHERE state = 'claimed' AND lease_until <= $1 RETURNING ${COLUMNS}`,
          [now],
        )
      ).rows;
      return rows.sort((a, b) => a.ord - b.ord).map(taskFromRow);
    });
    this.#tellWaiters(lapsed);
    return lapsed;
  }

  async get(taskIds: readonly string[]): Promise<HostTaskRecord[]> {
    if (taskIds.length === 0) return [];
    return (await this.#access.read<TaskRow>(`SELECT ${COLUMNS} FROM host_tasks WHERE id = ANY($1::text[])`, [taskIds])).map(taskFromRow);
  }

  async find(runId: string, idempotencyKey: string, attempt: number): Promise<HostTaskRecord | undefined> {
    const [row] = await this.#access.read<TaskRow>(`SELECT ${COLUMNS} FROM host_tasks WHERE run_id = $1 AND idempotency_key = $2 AND attempt = $3`, [
      runId,
      idempotencyKey,
      attempt,
    ]);
    return row === undefined ? undefined : taskFromRow(row);
  }

  remove(taskIds: readonly string[]): Promise<void> {
    if (taskIds.length === 0) return Promise.resolve();
    const ids = [...taskIds];
    return this.#access.write(async (tx) => {
      await tx.query("DELETE FROM host_tasks WHERE id = ANY($1::text[])", [ids]);
    });
  }

  async list(filter: Partial<HostTaskFilter> & { readonly states?: readonly HostTaskState[]; readonly limit?: number } = {}): Promise<HostTaskRecord[]> {
    const { where, values } = filterSql(filter, filter.states ?? []);
    values.push(filter.limit ?? DEFAULT_LIST_LIMIT);
    return (await this.#access.read<TaskRow>(`SELECT ${COLUMNS} FROM host_tasks WHERE ${where} ORDER BY ord LIMIT $${values.length}`, values)).map(taskFromRow);
  }

  /**
   * Inside the store's append that schedules the call (`RunPatch.hostTasks`): the task is
   * written, claimed when it says so; a task its attempt has already fails the append (a bug:
   * the attempt is new).
   */
  async queueInAppend(tx: PgTransaction, task: StagedHostTask): Promise<void> {
    const inserted = await tx.query(
      `INSERT INTO host_tasks (id, run_id, seq, attempt, tool, tool_group, args, idempotency_key, traceparent, heartbeat_timeout_ms,
         namespace, labels, toolsets, waiter, state, created_at, lease, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13::jsonb, $14, $16, $15, $17, $18)
       ON CONFLICT (run_id, idempotency_key, attempt) DO NOTHING`,
      [...taskValues(task), task.claim === undefined ? "queued" : "claimed", task.claim?.lease ?? null, task.claim?.leaseUntil ?? null],
    );
    if (inserted.rowCount === 0) {
      throw new Error(`host task ${task.idempotencyKey} attempt ${task.attempt} is queued already; an append queues a call's first attempt only`);
    }
  }

  /** Tells the polls waiting for work that tasks were queued (by an append, once committed). */
  queued(): void {
    this.#notifier.publish(HOST_TASKS_TOPIC);
  }

  /** Inside the store's write that ends a run: its queued tasks go, its claimed ones are withdrawn. */
  async giveUpRun(tx: PgTransaction, runId: string): Promise<void> {
    await tx.query("DELETE FROM host_tasks WHERE run_id = $1 AND state IN ('queued', 'answered', 'lapsed')", [runId]);
    await tx.query("UPDATE host_tasks SET state = 'withdrawn' WHERE run_id = $1 AND state = 'claimed'", [runId]);
  }

  #tellWaiters(tasks: readonly HostTaskRecord[]): void {
    for (const waiter of new Set(tasks.map((task) => task.waiter))) this.#notifier.publish(hostTaskWaiterTopic(waiter));
  }
}

/** The WHERE clause of `filter` (every field given must match, as `audienceMatches` says) and its values. */
function filterSql(filter: Partial<HostTaskFilter>, states: readonly HostTaskState[]): { where: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (states.length > 0) where.push(`state = ANY(${param([...states])}::text[])`);
  if (filter.tools !== undefined) {
    const exact = filter.tools.filter((t) => !t.endsWith(".*"));
    const groups = filter.tools.filter((t) => t.endsWith(".*")).map((t) => t.slice(0, -2));
    where.push(`(tool = ANY(${param(exact)}::text[]) OR tool_group = ANY(${param(groups)}::text[]))`);
  }
  if (filter.namespace !== undefined) where.push(`namespace = ${param(filter.namespace)}`);
  // jsonb containment: every label asked for is on the run, with that value.
  if (filter.labels !== undefined && Object.keys(filter.labels).length > 0) where.push(`labels @> ${param(JSON.stringify(filter.labels))}::jsonb`);
  if (filter.toolset !== undefined) where.push(`toolsets ? ${param(filter.toolset)}`);
  return { where: where.length > 0 ? where.join(" AND ") : "true", values };
}

function prefixed(alias: string): string {
  return COLUMNS.split(", ")
    .map((column) => `${alias}.${column}`)
    .join(", ");
}

/** A new task's columns, in the order of the inserts above ($1 … $15). */
function taskValues(task: NewHostTask): unknown[] {
  const columns = newTaskColumns(task);
  return NEW_TASK_COLUMNS.map((column) => columns[column]);
}
