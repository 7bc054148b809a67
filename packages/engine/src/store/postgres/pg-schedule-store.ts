import { fireFromRow, hasLabels, scheduleFromRow, scheduleToRow, type FireRow, type ScheduleRow } from "../schedule-rows.js";
import type { FirePatch, FireRecord, FireState, NewFire, ScheduleQuery, ScheduleRecord, ScheduleStore } from "../schedule-store.js";
import type { PgAccess, PgTransaction } from "./pg-access.js";

/**
 * `ScheduleStore` in the PostgreSQL store's database (`schedules`, `schedule_fires`: PostgreSQL
 * migration 8), shared by every node.
 *
 * Invariants:
 * - Each compare-and-set is one conditional UPDATE (row-locked by PostgreSQL): of nodes claiming
 *   the same due time, the first to commit changes the row and the others' condition no longer
 *   holds when they re-read it under the lock (READ COMMITTED re-checks an updated row).
 * - The fires' primary key is the claim: `ON CONFLICT DO NOTHING` answers which insert won.
 */
export class PgScheduleStore implements ScheduleStore {
  readonly #access: PgAccess;

  constructor(access: PgAccess) {
    this.#access = access;
  }

  create(schedule: ScheduleRecord): Promise<void> {
    const row = scheduleToRow(schedule);
    return this.#access.write(async (tx) => {
      await tx.query(
        `INSERT INTO schedules (id, namespace, labels, body, paused, next_fire_at, fire_count, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [row.id, row.namespace, row.labels, row.body, row.paused, row.next_fire_at, row.fire_count, row.created_at, row.updated_at],
      );
    });
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const [row] = await this.#access.read<ScheduleRow>("SELECT * FROM schedules WHERE id = $1", [id]);
    return row === undefined ? undefined : scheduleFromRow(row);
  }

  async list(query: ScheduleQuery): Promise<ScheduleRecord[]> {
    const found: ScheduleRecord[] = [];
    let after = query.after ?? null;
    for (;;) {
      const rows = await this.#access.read<ScheduleRow>(
        `SELECT * FROM schedules WHERE ($1::text IS NULL OR coalesce(namespace, '') = $1)
           AND ($2::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM schedules WHERE id = $2))
         ORDER BY created_at, id LIMIT $3`,
        [query.namespace || null, after, query.limit],
      );
      for (const row of rows) {
        const schedule = scheduleFromRow(row);
        if (hasLabels(schedule, query.labels)) found.push(schedule);
        if (found.length === query.limit) return found;
      }
      if (rows.length < query.limit) return found;
      after = rows[rows.length - 1]!.id;
    }
  }

  setPaused(id: string, paused: boolean, nextFireAt: number | undefined, now: number): Promise<boolean> {
    return this.#access.write(
      async (tx) =>
        (await tx.query("UPDATE schedules SET paused = $1, next_fire_at = $2, updated_at = $3 WHERE id = $4", [paused ? 1 : 0, nextFireAt ?? null, now, id]))
          .rowCount === 1,
    );
  }

  delete(id: string): Promise<boolean> {
    return this.#access.write(async (tx) => {
      await tx.query("DELETE FROM schedule_fires WHERE schedule_id = $1", [id]);
      return (await tx.query("DELETE FROM schedules WHERE id = $1", [id])).rowCount === 1;
    });
  }

  async due(now: number, limit: number): Promise<ScheduleRecord[]> {
    const rows = await this.#access.read<ScheduleRow>(
      "SELECT * FROM schedules WHERE paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2",
      [now, limit],
    );
    return rows.map(scheduleFromRow);
  }

  async earliestFire(): Promise<number | undefined> {
    const [row] = await this.#access.read<{ at: string | null }>("SELECT min(next_fire_at) AS at FROM schedules WHERE paused = 0 AND next_fire_at IS NOT NULL");
    return row?.at == null ? undefined : Number(row.at);
  }

  claimNext(id: string, expected: number, fires: readonly NewFire[], next: number | undefined, now: number): Promise<boolean> {
    return this.#access.write(async (tx) => {
      const advanced = await tx.query(
        "UPDATE schedules SET next_fire_at = $1, fire_count = fire_count + $2, updated_at = $3 WHERE id = $4 AND next_fire_at = $5 AND paused = 0",
        [next ?? null, fires.length, now, id, expected],
      );
      if (advanced.rowCount !== 1) return false;
      for (const fire of fires) await insertFire(tx, fire, now);
      return true;
    });
  }

  addFire(fire: NewFire): Promise<boolean> {
    return this.#access.write((tx) => insertFire(tx, fire, fire.claimedAt));
  }

  takeFire(scheduleId: string, fireAt: number, from: Pick<FireRecord, "heldBy" | "claimedAt">, heldBy: string, now: number): Promise<boolean> {
    return this.#access.write(
      async (tx) =>
        (
          await tx.query(
            `UPDATE schedule_fires SET held_by = $1, claimed_at = $2
               WHERE schedule_id = $3 AND fire_at = $4 AND held_by = $5 AND claimed_at = $6 AND state IN ('claimed', 'buffered')`,
            [heldBy, now, scheduleId, fireAt, from.heldBy, from.claimedAt],
          )
        ).rowCount === 1,
    );
  }

  updateFire(scheduleId: string, fireAt: number, patch: FirePatch, now: number): Promise<void> {
    return this.#access.write(async (tx) => {
      await tx.query(
        "UPDATE schedule_fires SET run_id = coalesce($1, run_id), reason = $2, state = $3, updated_at = $4 WHERE schedule_id = $5 AND fire_at = $6",
        [patch.runId ?? null, patch.reason ?? null, patch.state, now, scheduleId, fireAt],
      );
    });
  }

  async fires(scheduleId: string, query: { readonly limit: number; readonly states?: readonly FireState[]; readonly before?: number }): Promise<FireRecord[]> {
    const rows = await this.#access.read<FireRow>(
      `SELECT * FROM schedule_fires WHERE schedule_id = $1 AND ($2::text[] IS NULL OR state = ANY($2)) AND fire_at < $3
       ORDER BY fire_at DESC LIMIT $4`,
      [scheduleId, query.states ?? null, query.before ?? Number.MAX_SAFE_INTEGER, query.limit],
    );
    return rows.map(fireFromRow);
  }

  async openFires(limit: number): Promise<FireRecord[]> {
    const rows = await this.#access.read<FireRow>("SELECT * FROM schedule_fires WHERE state IN ('claimed', 'buffered') ORDER BY claimed_at, fire_at LIMIT $1", [
      limit,
    ]);
    return rows.map(fireFromRow);
  }
}

async function insertFire(tx: PgTransaction, fire: NewFire, now: number): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO schedule_fires (schedule_id, fire_at, kind, state, held_by, claimed_at, updated_at)
     VALUES ($1, $2, $3, 'claimed', $4, $5, $6) ON CONFLICT DO NOTHING`,
    [fire.scheduleId, fire.fireAt, fire.kind, fire.heldBy, fire.claimedAt, now],
  );
  return inserted.rowCount === 1;
}
