import { terminalStatuses } from "@tapedeck/protocol";
import type { FirePatch, FireRecord, FireState, NewFire, ScheduleRecord } from "../store/schedule-store.js";
import { fireKey } from "./fire-key.js";
import type { ScheduleHost } from "./schedule-host.js";
import { ScheduleTimes } from "./schedule-times.js";

/**
 * Makes schedules fire: claims the fires that are due in the store, then starts their runs.
 *
 * Invariants:
 * - A fire happens once across processes and restarts: it is a row claimed in the store (unique
 *   by schedule and time, inserted with a compare-and-set on the schedule's next fire time), and
 *   its run is started with a key derived from the same pair (`fire-key.ts`). Two engines, a
 *   crash between claim and start, or a clock that jumps back start one run.
 * - A claimed fire is acted on by its holder; one whose holder has not finished it within
 *   `FIRE_TAKEOVER_MS` (it crashed) is taken over by a compare-and-set, and started with the
 *   same key (a run started before the crash is found, not started again).
 * - Passes run one at a time in an engine (`#chain`); they never throw: a fault of the store is
 *   reported (`engine.error`) and the fire stays claimed for the next pass.
 */

/** A fire claimed this long ago and still not started is its holder's no more (it crashed): as long as a run lease. */
export const FIRE_TAKEOVER_MS = 30_000;
/** How often a firing engine looks for schedules other processes created or changed. */
export const SCHEDULE_POLL_MS = 1_000;
/** A due fire older than this is a missed one (fired by catch-up rules, not as the current fire). */
export const MISSED_AFTER_MS = 60_000;
/** Fires of one schedule claimed in one pass (catch-up `all` after a long stop goes on at the next pass). */
const MAX_FIRES_PER_PASS = 100;
/** Schedules and open fires read per pass. */
const BATCH = 100;
/** How many of a schedule's latest started fires are looked at for runs that have not ended (overlap). */
const ACTIVE_SCAN = 20;

/** What became of one fire in a pass. */
export interface FireOutcome {
  readonly scheduleId: string;
  readonly fireAt: number;
  readonly kind: FireRecord["kind"];
  readonly state: FireState;
  readonly runId?: string;
  readonly reason?: string;
}

export class ScheduleFirer {
  readonly #host: ScheduleHost;
  readonly #background: boolean;
  #chain: Promise<unknown> = Promise.resolve();
  #cancelTimer: (() => void) | undefined;
  #closed = false;

  /** `background`: fire on the engine's clock by itself (`EngineOptions.fireSchedules`); else only when asked (`fireDue`, `trigger`). */
  constructor(host: ScheduleHost, background: boolean) {
    this.#host = host;
    this.#background = background;
  }

  /** Starts firing, when in the background: overdue fires at once. */
  open(): void {
    if (this.#background) this.kick();
  }

  /** Runs a pass soon (after the one running), and re-arms the timer after it. */
  kick(): void {
    if (!this.#background || this.#closed) return;
    void this.fireDue().then(() => this.#arm());
  }

  /** Claims what is due now and acts on the open fires this engine may act on; resolves with what became of them. */
  fireDue(): Promise<FireOutcome[]> {
    return this.#serial(() => this.#pass());
  }

  /** Acts on one fire now (a trigger, a backfill), in turn with the passes. */
  act(fire: FireRecord): Promise<FireOutcome | undefined> {
    return this.#serial(() => this.#act(fire, this.#host.clock.now()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#cancelTimer?.();
    await this.#chain.catch(() => undefined);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(work, work);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  async #arm(): Promise<void> {
    if (this.#closed) return;
    const now = this.#host.clock.now();
    let earliest: number | undefined;
    try {
      earliest = await this.#host.schedules.earliestFire();
    } catch (error) {
      this.#host.emit({ type: "engine.error", error });
    }
    if (this.#closed) return;
    this.#cancelTimer?.();
    this.#cancelTimer = this.#host.clock.setTimer(Math.min(earliest ?? Infinity, now + SCHEDULE_POLL_MS), () => this.kick());
  }

  async #pass(): Promise<FireOutcome[]> {
    if (this.#closed) return [];
    const now = this.#host.clock.now();
    const outcomes: FireOutcome[] = [];
    try {
      for (const schedule of await this.#host.schedules.due(now, BATCH)) await this.#claimDue(schedule, now);
      for (const fire of await this.#host.schedules.openFires(BATCH)) {
        if (this.#closed) break;
        try {
          const outcome = await this.#act(fire, now);
          if (outcome) outcomes.push(outcome);
        } catch (error) {
          // The fire stays open: the next pass (or, after a crash, another process) starts it with its key.
          this.#host.emit({ type: "engine.error", error });
        }
      }
    } catch (error) {
      this.#host.emit({ type: "engine.error", error });
    }
    return outcomes;
  }

  /** Claims the schedule's due fires, as its catch-up policy says, and advances it past them. */
  async #claimDue(schedule: ScheduleRecord, now: number): Promise<void> {
    const expected = schedule.nextFireAt!;
    const times = new ScheduleTimes(schedule.timing, schedule.createdAt);
    const { catchup, catchupWindowMs } = schedule.policies;
    const remaining = schedule.timing.maxFires === undefined ? Infinity : schedule.timing.maxFires - schedule.fireCount;
    const windowStart = now - catchupWindowMs;
    let chosen: number[];
    let consumedUntil = now;
    if (catchup === "all") {
      const due = times.between(Math.max(expected, windowStart) - 1, now, MAX_FIRES_PER_PASS);
      chosen = due.slice(0, Math.max(0, remaining));
      if (due.length === MAX_FIRES_PER_PASS) consumedUntil = due[due.length - 1]!;
    } else {
      const latest = times.latest(expected - 1, now);
      const wanted = latest !== undefined && latest >= windowStart && (catchup === "latest" || latest >= now - MISSED_AFTER_MS);
      chosen = wanted && remaining > 0 ? [latest] : [];
    }
    const fires: NewFire[] = chosen.map((fireAt) => ({ scheduleId: schedule.id, fireAt, kind: "scheduled", heldBy: this.#host.holder, claimedAt: now }));
    const next = times.next(consumedUntil, schedule.fireCount + fires.length);
    // False: another process claimed this due time first; its fires are its own.
    await this.#host.schedules.claimNext(schedule.id, expected, fires, next, now);
  }

  async #act(fire: FireRecord, now: number): Promise<FireOutcome | undefined> {
    const store = this.#host.schedules;
    if (fire.heldBy !== this.#host.holder) {
      if (fire.claimedAt > now - FIRE_TAKEOVER_MS) return undefined;
      if (!(await store.takeFire(fire.scheduleId, fire.fireAt, fire, this.#host.holder, now))) return undefined;
    }
    const schedule = await store.get(fire.scheduleId);
    // Deleted meanwhile: its fires went with it.
    if (!schedule) return undefined;
    const active = await this.#activeRuns(schedule);
    // Backfills were asked for by a person: they start whatever runs.
    const overlap = fire.kind === "backfill" ? "allow" : schedule.policies.overlap;
    if (active.length > 0 && overlap !== "allow") {
      const runs = active.join(", ");
      if (overlap === "skip") return this.#record(fire, { state: "skipped", reason: `the run ${runs} of an earlier fire had not ended (overlap: skip)` });
      if (overlap === "buffer_one") {
        if (fire.state === "buffered") return undefined;
        const [buffered] = await store.fires(schedule.id, { limit: 1, states: ["buffered"] });
        if (buffered && buffered.fireAt !== fire.fireAt)
          return this.#record(fire, { state: "skipped", reason: `the run ${runs} had not ended and a fire already waits for it (overlap: buffer_one)` });
        return this.#record(fire, { state: "buffered", reason: `waits for the run ${runs} to end (overlap: buffer_one)` });
      }
      for (const runId of active)
        await this.#host.cancel(
          runId,
          `cancelled by the schedule ${schedule.id}: its fire at ${new Date(fire.fireAt).toISOString()} replaces it (overlap: cancel_previous)`,
        );
    }
    const started = await this.#host.start(schedule, fire.fireAt, fireKey(schedule.id, fire.fireAt));
    if (started.kind === "refused") return this.#record(fire, { state: "failed", reason: started.reason });
    return this.#record(fire, { state: "started", runId: started.runId });
  }

  /** The runs of the schedule's latest started fires that have not ended. */
  async #activeRuns(schedule: ScheduleRecord): Promise<string[]> {
    const started = await this.#host.schedules.fires(schedule.id, { limit: ACTIVE_SCAN, states: ["started"] });
    const active: string[] = [];
    for (const fire of started) {
      const run = fire.runId === undefined ? undefined : await this.#host.runs.getRun(fire.runId);
      if (run && !terminalStatuses.includes(run.status)) active.push(run.id);
    }
    return active;
  }

  async #record(fire: FireRecord, patch: FirePatch): Promise<FireOutcome> {
    await this.#host.schedules.updateFire(fire.scheduleId, fire.fireAt, patch, this.#host.clock.now());
    const outcome: FireOutcome = { scheduleId: fire.scheduleId, fireAt: fire.fireAt, kind: fire.kind, ...patch };
    this.#host.emit({ type: "schedule.fired", ...outcome });
    return outcome;
  }
}
