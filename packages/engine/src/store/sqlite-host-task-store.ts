/**
 * The host task queue in the SQLite store's database (table of migration 17), written through
 * the store's group commit.
 *
 * Invariants:
 * - A claim reads and updates its tasks inside one write: SQLite's write lock (`BEGIN
 *   IMMEDIATE`, taken by every batch) makes claims of every process sharing the file one at a
 *   time, so no task is claimed twice.
 * - Notifications are published only after the commit that made them true.
 * - `(run_id, idempotency_key, attempt)` is unique (migration 20): an attempt of a call, or of a
 *   sub-call (`{run}/{seq}.{n}`, which shares its call's seq), is queued once, whichever process queues it.
 */
import { randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import {
  audienceMatches,
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
} from "./host-task-store.js";
import { newTaskColumns, taskFromRow, type HostTaskRow, type NewTaskColumns } from "./host-task-rows.js";
import type { Notifier } from "./notifier.js";
import type { SqliteAccess } from "./sqlite-handle.js";

/** A new task's row: its columns, and its state (a task staged with a claim is written claimed). */
type InsertRow = NewTaskColumns & {
  readonly state: HostTaskState;
  readonly lease: string | null;
  readonly lease_until: number | null;
  readonly answer: string | null;
};

/** `list` without a limit. */
const DEFAULT_LIST_LIMIT = 100;

/** Tasks `get` and `remove` take per statement: SQLite's default bound on parameters is far above it. */
const IDS_PER_STATEMENT = 500;

export class SqliteHostTaskStore implements HostTaskStore {
  readonly #db: Database.Database;
  readonly #access: SqliteAccess;
  readonly #notifier: Notifier;
  readonly #sql;

  constructor(db: Database.Database, access: SqliteAccess, notifier: Notifier) {
    this.#db = db;
    this.#access = access;
    this.#notifier = notifier;
    this.#sql = {
      insert: db.prepare<[InsertRow]>(
        `INSERT INTO host_tasks (id, run_id, seq, attempt, tool, tool_group, args, idempotency_key, traceparent, heartbeat_timeout_ms,
           namespace, labels, toolsets, waiter, state, lease, lease_until, answer, created_at)
         VALUES (@id, @run_id, @seq, @attempt, @tool, @tool_group, @args, @idempotency_key, @traceparent, @heartbeat_timeout_ms,
           @namespace, @labels, @toolsets, @waiter, @state, @lease, @lease_until, @answer, @created_at)
         ON CONFLICT (run_id, idempotency_key, attempt) DO NOTHING`,
      ),
      byAttempt: db.prepare<[string, string, number], HostTaskRow>("SELECT * FROM host_tasks WHERE run_id = ? AND idempotency_key = ? AND attempt = ?"),
      setWaiter: db.prepare<[string, string]>("UPDATE host_tasks SET waiter = ? WHERE id = ?"),
      // The other attempts of a call: a claimed one is withdrawn (its worker hears `cancelled`), the rest deleted.
      withdrawOthers: db.prepare<[string, string, number]>(
        "UPDATE host_tasks SET state = 'withdrawn' WHERE run_id = ? AND idempotency_key = ? AND attempt <> ? AND state = 'claimed'",
      ),
      deleteOthers: db.prepare<[string, string, number]>(
        "DELETE FROM host_tasks WHERE run_id = ? AND idempotency_key = ? AND attempt <> ? AND state IN ('queued', 'answered', 'lapsed')",
      ),
      byId: db.prepare<[string], HostTaskRow>("SELECT * FROM host_tasks WHERE id = ?"),
      claimOne: db.prepare<[string, number, string]>("UPDATE host_tasks SET state = 'claimed', lease = ?, lease_until = ? WHERE id = ? AND state = 'queued'"),
      extend: db.prepare<[number, string]>("UPDATE host_tasks SET lease_until = ? WHERE id = ?"),
      release: db.prepare<[string, string]>(
        "UPDATE host_tasks SET state = 'queued', lease = NULL, lease_until = NULL WHERE id = ? AND lease = ? AND state = 'claimed'",
      ),
      setAnswer: db.prepare<[string, string]>("UPDATE host_tasks SET state = 'answered', answer = ?, lease = NULL, lease_until = NULL WHERE id = ?"),
      delete: db.prepare<[string]>("DELETE FROM host_tasks WHERE id = ?"),
      withdrawClaimed: db.prepare<[string]>("UPDATE host_tasks SET state = 'withdrawn' WHERE id = ? AND state = 'claimed'"),
      deleteUnclaimed: db.prepare<[string]>("DELETE FROM host_tasks WHERE id = ? AND state IN ('queued', 'answered', 'lapsed')"),
      lapsedLeases: db.prepare<[number], HostTaskRow>("SELECT * FROM host_tasks WHERE state IN ('claimed', 'withdrawn') AND lease_until <= ? ORDER BY rowid"),
      lapse: db.prepare<[string]>("UPDATE host_tasks SET state = 'lapsed', lease = NULL, lease_until = NULL WHERE id = ?"),
      withdrawRun: db.prepare<[string]>("UPDATE host_tasks SET state = 'withdrawn' WHERE run_id = ? AND state = 'claimed'"),
      deleteRun: db.prepare<[string]>("DELETE FROM host_tasks WHERE run_id = ? AND state IN ('queued', 'answered', 'lapsed')"),
    };
  }

  enqueue(task: NewHostTask): Promise<HostTaskRecord> {
    let stored: HostTaskRecord | undefined;
    let created = false;
    return this.#access
      .write(() => {
        created = this.#sql.insert.run(newTaskRow(task)).changes === 1;
        const row = this.#sql.byAttempt.get(task.runId, task.idempotencyKey, task.attempt);
        if (!row) throw new Error(`host task ${task.idempotencyKey} attempt ${task.attempt} was neither queued nor found`);
        if (!created && row.waiter !== task.waiter) this.#sql.setWaiter.run(task.waiter, row.id);
        this.#sql.withdrawOthers.run(task.runId, task.idempotencyKey, task.attempt);
        this.#sql.deleteOthers.run(task.runId, task.idempotencyKey, task.attempt);
        stored = { ...taskFromRow(row), waiter: task.waiter };
      })
      .then(() => {
        if (created) this.#notifier.publish(HOST_TASKS_TOPIC);
        return stored!;
      });
  }

  claim(filter: HostTaskFilter, max: number, now: number): Promise<HostTaskRecord[]> {
    const claimed: HostTaskRecord[] = [];
    if (filter.tools.length === 0 || max <= 0) return Promise.resolve(claimed);
    return this.#access
      .write(() => {
        // Chosen first, then claimed: the connection cannot write while a query iterates.
        const chosen: HostTaskRecord[] = [];
        for (const row of this.#candidates(filter, "queued")) {
          if (chosen.length >= max) break;
          const task = taskFromRow(row);
          if (audienceMatches(filter, task.audience)) chosen.push(task);
        }
        for (const task of chosen) {
          const lease = randomBytes(16).toString("base64url");
          const leaseUntil = now + task.heartbeatTimeoutMs;
          if (this.#sql.claimOne.run(lease, leaseUntil, task.id).changes === 1) claimed.push({ ...task, state: "claimed", lease, leaseUntil });
        }
      })
      .then(() => {
        this.#tellWaiters(claimed);
        return claimed;
      });
  }

  release(taskId: string, lease: string): Promise<void> {
    let released = false;
    return this.#access
      .write(() => {
        released = this.#sql.release.run(taskId, lease).changes === 1;
      })
      .then(() => {
        if (released) this.#notifier.publish(HOST_TASKS_TOPIC);
      });
  }

  heartbeat(taskId: string, lease: string, now: number): Promise<LeaseAnswer> {
    let answer: LeaseAnswer = "lost";
    return this.#access
      .write(() => {
        const row = this.#sql.byId.get(taskId);
        if (!row || row.lease !== lease || (row.state !== "claimed" && row.state !== "withdrawn")) return;
        if (row.state === "withdrawn") {
          answer = "cancelled";
          return;
        }
        this.#sql.extend.run(now + row.heartbeat_timeout_ms, taskId);
        answer = "ok";
      })
      .then(() => answer);
  }

  answer(taskId: string, lease: string, outcome: HostTaskAnswer, _now: number): Promise<LeaseAnswer> {
    let answer: LeaseAnswer = "lost";
    let waiter: string | undefined;
    return this.#access
      .write(() => {
        const row = this.#sql.byId.get(taskId);
        if (!row || row.lease !== lease || (row.state !== "claimed" && row.state !== "withdrawn")) return;
        if (row.state === "withdrawn") {
          // Nobody wants it: the worker is told, and the task is done with.
          this.#sql.delete.run(taskId);
          answer = "cancelled";
          return;
        }
        this.#sql.setAnswer.run(JSON.stringify(outcome), taskId);
        waiter = row.waiter;
        answer = "ok";
      })
      .then(() => {
        if (waiter !== undefined) this.#notifier.publish(hostTaskWaiterTopic(waiter));
        return answer;
      });
  }

  withdraw(taskId: string): Promise<void> {
    return this.#access.write(() => {
      if (this.#sql.deleteUnclaimed.run(taskId).changes === 0) this.#sql.withdrawClaimed.run(taskId);
    });
  }

  expire(now: number): Promise<HostTaskRecord[]> {
    const lapsed: HostTaskRecord[] = [];
    return this.#access
      .write(() => {
        for (const row of this.#sql.lapsedLeases.all(now)) {
          if (row.state === "withdrawn") {
            this.#sql.delete.run(row.id);
            continue;
          }
          this.#sql.lapse.run(row.id);
          const { lease: _lease, leaseUntil: _until, ...task } = taskFromRow(row);
          lapsed.push({ ...task, state: "lapsed" });
        }
      })
      .then(() => {
        this.#tellWaiters(lapsed);
        return lapsed;
      });
  }

  get(taskIds: readonly string[]): Promise<HostTaskRecord[]> {
    return this.#access.read(() => {
      const found: HostTaskRecord[] = [];
      for (let i = 0; i < taskIds.length; i += IDS_PER_STATEMENT) {
        const ids = taskIds.slice(i, i + IDS_PER_STATEMENT);
        const rows = this.#db.prepare<string[], HostTaskRow>(`SELECT * FROM host_tasks WHERE id IN (${ids.map(() => "?").join(", ")})`).all(...ids);
        found.push(...rows.map(taskFromRow));
      }
      return found;
    });
  }

  find(runId: string, idempotencyKey: string, attempt: number): Promise<HostTaskRecord | undefined> {
    return this.#access.read(() => {
      const row = this.#sql.byAttempt.get(runId, idempotencyKey, attempt);
      return row === undefined ? undefined : taskFromRow(row);
    });
  }

  remove(taskIds: readonly string[]): Promise<void> {
    if (taskIds.length === 0) return Promise.resolve();
    return this.#access.write(() => {
      for (const id of taskIds) this.#sql.delete.run(id);
    });
  }

  list(filter: Partial<HostTaskFilter> & { readonly states?: readonly HostTaskState[]; readonly limit?: number } = {}): Promise<HostTaskRecord[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    return this.#access.read(() => {
      const listed: HostTaskRecord[] = [];
      for (const row of this.#candidates(filter, ...(filter.states ?? []))) {
        if (listed.length >= limit) break;
        const task = taskFromRow(row);
        if (audienceMatches(filter, task.audience)) listed.push(task);
      }
      return listed;
    });
  }

  /**
   * Inside the store's append that schedules the call (`RunPatch.hostTasks`): the task is
   * written, claimed when it says so; a task its attempt has already fails the append (a bug:
   * the attempt is new).
   */
  queueInAppend(task: StagedHostTask): void {
    const row = newTaskRow(task);
    const claim = task.claim === undefined ? {} : { state: "claimed" as const, lease: task.claim.lease, lease_until: task.claim.leaseUntil };
    if (this.#sql.insert.run({ ...row, ...claim }).changes === 0) {
      throw new Error(`host task ${task.idempotencyKey} attempt ${task.attempt} is queued already; an append queues a call's first attempt only`);
    }
  }

  /** Tells the polls waiting here that tasks were queued (by an append, once committed). */
  queued(): void {
    this.#notifier.publish(HOST_TASKS_TOPIC);
  }

  /** Inside the store's write that ends a run: its queued tasks go, its claimed ones are withdrawn. */
  giveUpRun(runId: string): void {
    this.#sql.deleteRun.run(runId);
    this.#sql.withdrawRun.run(runId);
  }

  /** Rows in `states` (any state when none is given) for `filter`'s tools and namespace, oldest first; labels and toolsets are checked by the caller. */
  #candidates(filter: Partial<HostTaskFilter>, ...states: HostTaskState[]): IterableIterator<HostTaskRow> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (states.length > 0) {
      where.push(`state IN (${states.map(() => "?").join(", ")})`);
      params.push(...states);
    }
    if (filter.tools !== undefined) {
      const exact = filter.tools.filter((t) => !t.endsWith(".*"));
      const groups = filter.tools.filter((t) => t.endsWith(".*")).map((t) => t.slice(0, -2));
      const either = [
        ...(exact.length > 0 ? [`tool IN (${exact.map(() => "?").join(", ")})`] : []),
        ...(groups.length > 0 ? [`tool_group IN (${groups.map(() => "?").join(", ")})`] : []),
      ];
      where.push(either.length > 0 ? `(${either.join(" OR ")})` : "0");
      params.push(...exact, ...groups);
    }
    if (filter.namespace !== undefined) {
      where.push("namespace = ?");
      params.push(filter.namespace);
    }
    const sql = `SELECT * FROM host_tasks ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY rowid`;
    return this.#db.prepare<(string | number)[], HostTaskRow>(sql).iterate(...params);
  }

  #tellWaiters(tasks: readonly HostTaskRecord[]): void {
    for (const waiter of new Set(tasks.map((task) => task.waiter))) this.#notifier.publish(hostTaskWaiterTopic(waiter));
  }
}

function newTaskRow(task: NewHostTask): InsertRow {
  return { ...newTaskColumns(task), state: "queued", lease: null, lease_until: null, answer: null };
}
