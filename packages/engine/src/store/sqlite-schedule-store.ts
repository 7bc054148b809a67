import type Database from "better-sqlite3";
import { fireFromRow, hasLabels, scheduleFromRow, scheduleToRow, type FireRow, type ScheduleRow } from "./schedule-rows.js";
import type { FirePatch, FireRecord, FireState, NewFire, ScheduleQuery, ScheduleRecord, ScheduleStore } from "./schedule-store.js";
import type { SqliteAccess } from "./sqlite-handle.js";

/**
 * `ScheduleStore` in SQLite (`schedules`, `schedule_fires`: migration 24).
 *
 * Invariants:
 * - Every write is one write of the store's group commit (a SAVEPOINT inside the batch's
 *   IMMEDIATE transaction): a compare-and-set reads and writes under the database's write lock,
 *   so processes sharing the file claim one at a time.
 * - The fires' primary key (schedule_id, fire_at) is the claim: an insert of a time already
 *   there is ignored (and answered false).
 */
export class SqliteScheduleStore implements ScheduleStore {
  readonly #access: SqliteAccess;
  readonly #sql;

  constructor(db: Database.Database, access: SqliteAccess) {
    this.#access = access;
    this.#sql = {
      insert: db.prepare<[ScheduleRow]>(
        `INSERT INTO schedules (id, namespace, labels, body, paused, next_fire_at, fire_count, created_at, updated_at)
         VALUES (@id, @namespace, @labels, @body, @paused, @next_fire_at, @fire_count, @created_at, @updated_at)`,
      ),
      get: db.prepare<[string], ScheduleRow>("SELECT * FROM schedules WHERE id = ?"),
      list: db.prepare<[{ ns: string | null; after: string | null; limit: number }], ScheduleRow>(
        `SELECT * FROM schedules WHERE (@ns IS NULL OR coalesce(namespace, '') = @ns)
           AND (@after IS NULL OR rowid > (SELECT rowid FROM schedules WHERE id = @after)) ORDER BY rowid LIMIT @limit`,
      ),
      setPaused: db.prepare<[number, number | null, number, string]>("UPDATE schedules SET paused = ?, next_fire_at = ?, updated_at = ? WHERE id = ?"),
      delete: db.prepare<[string]>("DELETE FROM schedules WHERE id = ?"),
      deleteFires: db.prepare<[string]>("DELETE FROM schedule_fires WHERE schedule_id = ?"),
      due: db.prepare<[number, number], ScheduleRow>(
        "SELECT * FROM schedules WHERE paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?",
      ),
      earliest: db.prepare<[], { at: number | null }>("SELECT min(next_fire_at) AS at FROM schedules WHERE paused = 0 AND next_fire_at IS NOT NULL"),
      advance: db.prepare<[number | null, number, number, string, number]>(
        "UPDATE schedules SET next_fire_at = ?, fire_count = fire_count + ?, updated_at = ? WHERE id = ? AND next_fire_at = ? AND paused = 0",
      ),
      insertFire: db.prepare<[string, number, string, string, number, number]>(
        `INSERT INTO schedule_fires (schedule_id, fire_at, kind, state, held_by, claimed_at, updated_at)
         VALUES (?, ?, ?, 'claimed', ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      take: db.prepare<[string, number, string, number, string, number]>(
        `UPDATE schedule_fires SET held_by = ?, claimed_at = ?
           WHERE schedule_id = ? AND fire_at = ? AND held_by = ? AND claimed_at = ? AND state IN ('claimed', 'buffered')`,
      ),
      updateFire: db.prepare<[string | null, string | null, string, number, string, number]>(
        "UPDATE schedule_fires SET run_id = coalesce(?, run_id), reason = ?, state = ?, updated_at = ? WHERE schedule_id = ? AND fire_at = ?",
      ),
      fires: db.prepare<[{ id: string; states: string | null; before: number; limit: number }], FireRow>(
        `SELECT * FROM schedule_fires WHERE schedule_id = @id AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
           AND fire_at < @before ORDER BY fire_at DESC LIMIT @limit`,
      ),
      open: db.prepare<[number], FireRow>("SELECT * FROM schedule_fires WHERE state IN ('claimed', 'buffered') ORDER BY claimed_at, fire_at LIMIT ?"),
    };
  }

  create(schedule: ScheduleRecord): Promise<void> {
    return this.#access.write(() => {
      this.#sql.insert.run(scheduleToRow(schedule));
    });
  }

  get(id: string): Promise<ScheduleRecord | undefined> {
    return this.#access.read(() => {
      const row = this.#sql.get.get(id);
      return row === undefined ? undefined : scheduleFromRow(row);
    });
  }

  list(query: ScheduleQuery): Promise<ScheduleRecord[]> {
    return this.#access.read(() => {
      const found: ScheduleRecord[] = [];
      let after = query.after ?? null;
      // Labels are filtered after reading: read pages until the limit is met or nothing is left.
      for (;;) {
        const rows = this.#sql.list.all({ ns: query.namespace || null, after, limit: query.limit });
        for (const row of rows) {
          const schedule = scheduleFromRow(row);
          if (hasLabels(schedule, query.labels)) found.push(schedule);
          if (found.length === query.limit) return found;
        }
        if (rows.length < query.limit) return found;
        after = rows[rows.length - 1]!.id;
      }
    });
  }

  setPaused(id: string, paused: boolean, nextFireAt: number | undefined, now: number): Promise<boolean> {
    let changed = false;
    return this.#access
      .write(() => {
        changed = this.#sql.setPaused.run(paused ? 1 : 0, nextFireAt ?? null, now, id).changes === 1;
      })
      .then(() => changed);
  }

  delete(id: string): Promise<boolean> {
    let deleted = false;
    return this.#access
      .write(() => {
        this.#sql.deleteFires.run(id);
        deleted = this.#sql.delete.run(id).changes === 1;
      })
      .then(() => deleted);
  }

  due(now: number, limit: number): Promise<ScheduleRecord[]> {
    return this.#access.read(() => this.#sql.due.all(now, limit).map(scheduleFromRow));
  }

  earliestFire(): Promise<number | undefined> {
    return this.#access.read(() => this.#sql.earliest.get()?.at ?? undefined);
  }

  claimNext(id: string, expected: number, fires: readonly NewFire[], next: number | undefined, now: number): Promise<boolean> {
    let claimed = false;
    return this.#access
      .write(() => {
        claimed = this.#sql.advance.run(next ?? null, fires.length, now, id, expected).changes === 1;
        if (!claimed) return;
        for (const fire of fires) this.#insertFire(fire, now);
      })
      .then(() => claimed);
  }

  addFire(fire: NewFire): Promise<boolean> {
    let added = false;
    return this.#access
      .write(() => {
        added = this.#insertFire(fire, fire.claimedAt);
      })
      .then(() => added);
  }

  takeFire(scheduleId: string, fireAt: number, from: Pick<FireRecord, "heldBy" | "claimedAt">, heldBy: string, now: number): Promise<boolean> {
    let taken = false;
    return this.#access
      .write(() => {
        taken = this.#sql.take.run(heldBy, now, scheduleId, fireAt, from.heldBy, from.claimedAt).changes === 1;
      })
      .then(() => taken);
  }

  updateFire(scheduleId: string, fireAt: number, patch: FirePatch, now: number): Promise<void> {
    return this.#access.write(() => {
      this.#sql.updateFire.run(patch.runId ?? null, patch.reason ?? null, patch.state, now, scheduleId, fireAt);
    });
  }

  fires(scheduleId: string, query: { readonly limit: number; readonly states?: readonly FireState[]; readonly before?: number }): Promise<FireRecord[]> {
    const states = query.states === undefined ? null : JSON.stringify(query.states);
    return this.#access.read(() =>
      this.#sql.fires.all({ id: scheduleId, states, before: query.before ?? Number.MAX_SAFE_INTEGER, limit: query.limit }).map(fireFromRow),
    );
  }

  openFires(limit: number): Promise<FireRecord[]> {
    return this.#access.read(() => this.#sql.open.all(limit).map(fireFromRow));
  }

  #insertFire(fire: NewFire, now: number): boolean {
    return this.#sql.insertFire.run(fire.scheduleId, fire.fireAt, fire.kind, fire.heldBy, fire.claimedAt, now).changes === 1;
  }
}
