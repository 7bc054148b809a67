import { EngineError } from "../errors.js";
import type { Diagnostic } from "../script/diagnostic.js";
import type { FireRecord, ScheduleQuery, ScheduleRecord, ScheduleStore } from "../store/schedule-store.js";
import { newScheduleId } from "../util/ids.js";
import type { FireOutcome, ScheduleFirer } from "./schedule-firer.js";
import type { ScheduleHost } from "./schedule-host.js";
import { checkScheduleOptions, type ScheduleOptions } from "./schedule-options.js";
import { ScheduleTimes } from "./schedule-times.js";

/**
 * `engine.schedules`: schedules that start a workflow or a script on a cron expression or an
 * interval (see docs/design/schedules.md). Everything is kept in the store, so every engine on
 * it sees the same schedules; only engines opened with `fireSchedules` fire them.
 *
 * Failures: a schedule that is not right is answered `refused` with every problem (nothing is
 * stored); an unknown id throws `not_found`; a store that keeps no schedules, `misconfigured`.
 */

/** A schedule as read: its record and its next fire times. */
export type Schedule = ScheduleRecord & {
  /** The next fire times (up to `UPCOMING`), empty when paused or done. */
  readonly upcoming: readonly number[];
};

export type CreateScheduleResult =
  /** Saved; it fires from its first time on. */
  | { readonly kind: "created"; readonly schedule: Schedule }
  /** Nothing was saved: the options' problems, or the script's diagnostics. */
  | { readonly kind: "refused"; readonly problems: readonly string[]; readonly diagnostics: readonly Diagnostic[] };

/** What `create` needs to check a schedule's target before it is saved. */
export interface ScheduleTargets {
  /** Problems with starting `options`' workflow or script on its toolset (an unknown workflow, an input its schema refuses, a script that does not type-check). Throws `not_found` for an unknown toolset. */
  check(options: ScheduleOptions): Promise<{ readonly problems: readonly string[]; readonly diagnostics: readonly Diagnostic[] }>;
}

/** How many next fire times a schedule shows. */
export const UPCOMING = 5;
/** Fires one backfill may ask for. */
export const MAX_BACKFILL = 1_000;

export class Schedules {
  readonly #host: ScheduleHost | undefined;
  readonly #firer: ScheduleFirer | undefined;
  readonly #targets: ScheduleTargets;

  constructor(host: ScheduleHost | undefined, firer: ScheduleFirer | undefined, targets: ScheduleTargets) {
    this.#host = host;
    this.#firer = firer;
    this.#targets = targets;
  }

  /** Checks and saves a schedule. */
  async create(options: ScheduleOptions): Promise<CreateScheduleResult> {
    const { host, store } = this.#parts();
    const now = host.clock.now();
    const checked = checkScheduleOptions(options, now);
    if (!checked.ok) return { kind: "refused", problems: checked.problems, diagnostics: [] };
    const target = await this.#targets.check(options);
    if (target.problems.length > 0 || target.diagnostics.length > 0) return { kind: "refused", ...target };
    const paused = options.paused === true;
    const first = new ScheduleTimes(checked.timing, now).next(now, 0);
    const record: ScheduleRecord = {
      id: newScheduleId(now),
      timing: checked.timing,
      action: {
        toolset: options.toolset,
        ...(options.workflow === undefined ? {} : { workflow: options.workflow }),
        ...(options.source === undefined ? {} : { source: options.source }),
        input: options.input ?? null,
        ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
      },
      policies: checked.policies,
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      ...(options.namespace === undefined || options.namespace === "" ? {} : { namespace: options.namespace }),
      ...(options.note === undefined ? {} : { note: options.note }),
      paused,
      ...(first === undefined ? {} : { nextFireAt: first }),
      fireCount: 0,
      createdAt: now,
      updatedAt: now,
    };
    await store.create(record);
    this.#firer?.kick();
    return { kind: "created", schedule: this.#view(record) };
  }

  /** A schedule and its next fire times. Throws `not_found`. */
  async get(id: string): Promise<Schedule> {
    return this.#view(await this.#record(id));
  }

  /** Schedules, oldest first (of a namespace, carrying labels, after an id), with their next fire times. */
  async list(query: Partial<ScheduleQuery> = {}): Promise<Schedule[]> {
    const { store } = this.#parts();
    const found = await store.list({ limit: 100, ...query });
    return found.map((record) => this.#view(record));
  }

  /** Stops firing (claimed fires still start). Pausing a paused schedule changes nothing. */
  async pause(id: string): Promise<Schedule> {
    const { host, store } = this.#parts();
    const record = await this.#record(id);
    await store.setPaused(id, true, record.nextFireAt, host.clock.now());
    return this.get(id);
  }

  /** Fires again from now on: fires due while it was paused are not caught up. */
  async resume(id: string): Promise<Schedule> {
    const { host, store } = this.#parts();
    const record = await this.#record(id);
    const now = host.clock.now();
    const next = record.paused ? new ScheduleTimes(record.timing, record.createdAt).next(now, record.fireCount) : record.nextFireAt;
    await store.setPaused(id, false, next, now);
    this.#firer?.kick();
    return this.get(id);
  }

  /**
   * Fires now, under the schedule's overlap policy, paused or not: resolves with what became of
   * the fire (its run, or why it was skipped). Throws `conflict` when a fire at this instant exists.
   */
  async trigger(id: string): Promise<FireOutcome> {
    const { host, store } = this.#parts();
    const record = await this.#record(id);
    const now = host.clock.now();
    const fire = { scheduleId: record.id, fireAt: now, kind: "trigger" as const, heldBy: host.holder, claimedAt: now };
    if (!(await store.addFire(fire)))
      throw new EngineError("conflict", `The schedule ${id} already has a fire at ${new Date(now).toISOString()}; trigger it again in a moment.`);
    return this.#actNow({ ...fire, state: "claimed", updatedAt: now });
  }

  /**
   * Fires each of the schedule's times in [from, to) that has no fire yet, oldest first, as if it
   * had fired then (each run's key is its time's); they start whatever runs (overlap `allow`).
   * At most `MAX_BACKFILL` times. Resolves with what became of each.
   */
  async backfill(id: string, range: { readonly from: number; readonly to: number }): Promise<FireOutcome[]> {
    const { host, store } = this.#parts();
    const record = await this.#record(id);
    if (!(Number.isSafeInteger(range.from) && Number.isSafeInteger(range.to) && range.to > range.from))
      throw new EngineError("invalid_request", "A backfill needs from < to, times in ms since the epoch.");
    const now = host.clock.now();
    if (range.to > now + 1) throw new EngineError("invalid_request", "A backfill covers the past: its end must not be after now.");
    const times = new ScheduleTimes(record.timing, record.createdAt).between(range.from - 1, range.to - 1, MAX_BACKFILL + 1);
    if (times.length > MAX_BACKFILL)
      throw new EngineError("invalid_request", `A backfill starts at most ${MAX_BACKFILL} fires; this range has more. Backfill a shorter range.`);
    const outcomes: FireOutcome[] = [];
    for (const fireAt of times) {
      const fire = { scheduleId: id, fireAt, kind: "backfill" as const, heldBy: host.holder, claimedAt: now };
      if (!(await store.addFire(fire))) continue;
      outcomes.push(await this.#actNow({ ...fire, state: "claimed", updatedAt: now }));
    }
    return outcomes;
  }

  /** Deletes the schedule and its fires' records; its runs are left as they are. Throws `not_found`. */
  async delete(id: string): Promise<void> {
    const { store } = this.#parts();
    if (!(await store.delete(id))) throw new EngineError("not_found", `No schedule ${id}.`);
  }

  /** The schedule's fires, newest first, with their runs. Throws `not_found`. */
  async fires(id: string, query: { readonly limit?: number; readonly before?: number } = {}): Promise<FireRecord[]> {
    const { store } = this.#parts();
    await this.#record(id);
    return store.fires(id, { limit: query.limit ?? 100, ...(query.before === undefined ? {} : { before: query.before }) });
  }

  /**
   * Claims and starts what is due now (an engine opened with `fireSchedules` does this by
   * itself on its clock); resolves once done, after any pass already under way.
   */
  fireDue(): Promise<FireOutcome[]> {
    const { firer } = this.#parts();
    return firer.fireDue();
  }

  async #actNow(fire: FireRecord): Promise<FireOutcome> {
    const { firer } = this.#parts();
    const outcome = await firer.act(fire);
    // Undefined only when the schedule was deleted between the claim and now.
    if (outcome === undefined) throw new EngineError("not_found", `No schedule ${fire.scheduleId}.`);
    return outcome;
  }

  async #record(id: string): Promise<ScheduleRecord> {
    const { store } = this.#parts();
    const record = typeof id === "string" ? await store.get(id) : undefined;
    if (!record) throw new EngineError("not_found", `No schedule ${id}.`);
    return record;
  }

  #view(record: ScheduleRecord): Schedule {
    const times = new ScheduleTimes(record.timing, record.createdAt);
    const upcoming: number[] = [];
    if (!record.paused) {
      for (let at = record.nextFireAt, n = record.fireCount; at !== undefined && upcoming.length < UPCOMING; at = times.next(at, ++n)) upcoming.push(at);
    }
    return { ...record, upcoming };
  }

  #parts(): { host: ScheduleHost; store: ScheduleStore; firer: ScheduleFirer } {
    if (this.#host === undefined || this.#firer === undefined)
      throw new EngineError("misconfigured", "This engine's store keeps no schedules: open the engine on a SQLite data folder or a PostgreSQL store.");
    return { host: this.#host, store: this.#host.schedules, firer: this.#firer };
  }
}
