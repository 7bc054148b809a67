import type { JsonValue } from "@tapedeck/protocol";

/**
 * The schedules sub-store: schedules (what to start, when, under which policies) and their
 * fires, shared by every process on the store (SQLite `sqlite-schedule-store.ts`, PostgreSQL
 * `postgres/pg-schedule-store.ts`). The engine's `schedules/` decides what fires; this part only
 * keeps the rows and makes the claims atomic.
 *
 * Invariants every implementation keeps (the contract suite, `contracts/schedule-store-contract.ts`):
 * - A fire is one row, unique by (schedule, fire time): `addFire` of a time already there adds
 *   nothing and answers false, whoever asks, however often.
 * - `claimNext` is a compare-and-set on the schedule's next fire time: of several processes
 *   claiming the same due time, exactly one gets true; its fires are inserted and the schedule
 *   advanced in the same transaction (both or neither).
 * - `takeFire` is a compare-and-set on a fire's (holder, claim time): of several processes taking
 *   over one stale fire, one gets true.
 * - Deleting a schedule deletes its fires (its runs are left as they are).
 */

/** What a fire's run starts: a workflow pinned by the toolset, or a script on it. */
export interface ScheduleAction {
  readonly toolset: string;
  /** The workflow's name (`workflows.<name>` of the toolset); its source is the pinned one. */
  readonly workflow?: string;
  /** A script's TypeScript (when no workflow is named). */
  readonly source?: string;
  readonly input: JsonValue;
  /** The TTL of each fire's run, ms. Default: none. */
  readonly ttlMs?: number;
}

/** When a schedule fires: a cron expression in a zone, or a fixed interval. */
export interface ScheduleTiming {
  /** A cron expression (5 fields, or 6 with seconds first), read by `croner`. */
  readonly cron?: string;
  /** Or a fixed interval, ms, counted from `startAt` (or the schedule's creation). */
  readonly everyMs?: number;
  /** The IANA zone the cron expression is read in. Default "UTC". */
  readonly timezone: string;
  /** No fire before this (ms since the epoch). */
  readonly startAt?: number;
  /** No fire at or after this. */
  readonly endAt?: number;
  /** At most this many scheduled fires (triggers and backfills not counted). */
  readonly maxFires?: number;
}

export type OverlapPolicy =
  /** A fire due while a run of the schedule has not ended is skipped (recorded `skipped`). Default. */
  | "skip"
  /** One such fire waits (`buffered`) and starts when the runs have ended; more are skipped. */
  | "buffer_one"
  /** Every fire starts a run, whatever is running. */
  | "allow"
  /** The running runs are cancelled, then the fire starts its run. */
  | "cancel_previous";

export type CatchupPolicy =
  /** Of the fires missed while no process fired, only the latest starts. Default. */
  | "latest"
  /** Each missed fire (within the window) starts, oldest first. */
  | "all"
  /** None of the missed fires start. */
  | "none";

export interface SchedulePolicies {
  readonly overlap: OverlapPolicy;
  readonly catchup: CatchupPolicy;
  /** Missed fires older than this (ms before now) never start, whatever `catchup` says. */
  readonly catchupWindowMs: number;
}

export interface ScheduleRecord {
  readonly id: string;
  readonly timing: ScheduleTiming;
  readonly action: ScheduleAction;
  readonly policies: SchedulePolicies;
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  readonly note?: string;
  readonly paused: boolean;
  /** The next scheduled fire time; undefined once the schedule has no more (end date, count). */
  readonly nextFireAt?: number;
  /** Scheduled fires claimed so far. */
  readonly fireCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export type FireState =
  /** Claimed by `heldBy`; its run not yet started. */
  | "claimed"
  /** Waits for the schedule's running runs to end (overlap `buffer_one`). */
  | "buffered"
  /** Its run started (`runId`). */
  | "started"
  /** Not started, on purpose (`reason`: the overlap policy). */
  | "skipped"
  /** Could not start (`reason`: the script was refused, the toolset is gone). */
  | "failed";

export type FireKind =
  /** Due by the schedule's timing. */
  | "scheduled"
  /** Asked for now (`trigger`). */
  | "trigger"
  /** Asked for a past time (`backfill`). */
  | "backfill";

export interface FireRecord {
  readonly scheduleId: string;
  readonly fireAt: number;
  readonly kind: FireKind;
  readonly state: FireState;
  readonly runId?: string;
  readonly reason?: string;
  /** The process that holds the fire while it is `claimed` or `buffered`. */
  readonly heldBy: string;
  readonly claimedAt: number;
  readonly updatedAt: number;
}

export type NewFire = Pick<FireRecord, "scheduleId" | "fireAt" | "kind" | "heldBy" | "claimedAt">;

export interface ScheduleQuery {
  /** Only schedules of this namespace ("" or undefined: every namespace). */
  readonly namespace?: string;
  /** Only schedules carrying every one of these labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** At most this many, oldest first. */
  readonly limit: number;
  /** Only schedules created after the one with this id (paging). */
  readonly after?: string;
}

export interface FirePatch {
  readonly state: FireState;
  readonly runId?: string;
  readonly reason?: string;
}

export interface ScheduleStore {
  /** Saves a new schedule. Throws when its id exists. */
  create(schedule: ScheduleRecord): Promise<void>;
  get(id: string): Promise<ScheduleRecord | undefined>;
  list(query: ScheduleQuery): Promise<ScheduleRecord[]>;
  /** Sets paused (and the next fire time, recomputed by the caller); false when there is no such schedule. */
  setPaused(id: string, paused: boolean, nextFireAt: number | undefined, now: number): Promise<boolean>;
  /** Deletes the schedule and its fires; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Schedules not paused whose next fire time is at or before `now`, earliest first. */
  due(now: number, limit: number): Promise<ScheduleRecord[]>;
  /** The earliest next fire time of a schedule not paused, if any. */
  earliestFire(): Promise<number | undefined>;
  /**
   * If the schedule's next fire time is still `expected` (and it is not paused): inserts `fires`
   * (state `claimed`), sets the next fire time to `next` and adds `fires.length` to its count,
   * in one transaction; true. Else changes nothing; false.
   */
  claimNext(id: string, expected: number, fires: readonly NewFire[], next: number | undefined, now: number): Promise<boolean>;
  /** Inserts a fire outside the schedule's sequence (a trigger, a backfill); false when a fire at that time exists. */
  addFire(fire: NewFire): Promise<boolean>;
  /** If the fire is still held by `from.heldBy` since `from.claimedAt`, it is held by `heldBy` since `now`; true. */
  takeFire(scheduleId: string, fireAt: number, from: Pick<FireRecord, "heldBy" | "claimedAt">, heldBy: string, now: number): Promise<boolean>;
  /** Records what became of a fire. */
  updateFire(scheduleId: string, fireAt: number, patch: FirePatch, now: number): Promise<void>;
  /** A schedule's fires, newest first (of the states given, or all). */
  fires(scheduleId: string, query: { readonly limit: number; readonly states?: readonly FireState[]; readonly before?: number }): Promise<FireRecord[]>;
  /** Fires `claimed` or `buffered`, of every schedule, oldest first. */
  openFires(limit: number): Promise<FireRecord[]>;
}
