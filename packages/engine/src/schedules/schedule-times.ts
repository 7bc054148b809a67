import { Cron } from "croner";
import type { ScheduleTiming } from "../store/schedule-store.js";

/**
 * When a schedule fires, computed from its timing alone: cron expressions by `croner` (in the
 * schedule's IANA zone, so daylight saving time is the zone's), intervals by arithmetic.
 *
 * DST, as croner does it (Vixie cron's rules): a fixed-time expression (one value in each of
 * second, minute, hour, e.g. `30 2 * * *`) fires once a day whatever the zone does — in a
 * skipped hour at the first valid time after the gap, in a repeated hour at its first pass. An
 * expression with a wildcard or step in those fields (`0 * * * *`) fires in real time: a hour
 * that does not exist is not fired, a repeated hour is fired on each pass.
 */
export class ScheduleTimes {
  readonly #timing: ScheduleTiming;
  readonly #anchor: number;
  readonly #cron: Cron | undefined;

  /** `anchor`: where an interval is counted from when the timing has no `startAt` (the schedule's creation). Throws a `RangeError`/`TypeError` of croner for a bad expression or zone. */
  constructor(timing: ScheduleTiming, anchor: number) {
    this.#timing = timing;
    this.#anchor = timing.startAt ?? anchor;
    this.#cron = timing.cron === undefined ? undefined : new Cron(timing.cron, { timezone: timing.timezone, paused: true });
  }

  /** The first fire time strictly after `after`, or undefined when there is none (end date, count reached: `fired` so far). */
  next(after: number, fired: number): number | undefined {
    if (this.#timing.maxFires !== undefined && fired >= this.#timing.maxFires) return undefined;
    const from = Math.max(after, (this.#timing.startAt ?? -Infinity) - 1);
    const at = this.#cron === undefined ? this.#nextInterval(from) : this.#cron.nextRun(new Date(from))?.getTime();
    if (at === undefined || (this.#timing.endAt !== undefined && at >= this.#timing.endAt)) return undefined;
    return at;
  }

  /** Fire times in (after, until], oldest first, at most `limit`, ignoring the count limit. */
  between(after: number, until: number, limit: number): number[] {
    const times: number[] = [];
    for (let at = this.next(after, 0); at !== undefined && at <= until && times.length < limit; at = this.next(at, 0)) times.push(at);
    return times;
  }

  /** The latest fire time at or before `until` and after `after`, or undefined. */
  latest(after: number, until: number): number | undefined {
    const last = this.#cron === undefined ? this.#lastInterval(until) : this.#cron.previousRuns(1, new Date(until + 1))[0]?.getTime();
    if (last === undefined || last <= after) return undefined;
    if (this.#timing.endAt !== undefined && last >= this.#timing.endAt) return this.latest(after, this.#timing.endAt - 1);
    if (this.#timing.startAt !== undefined && last < this.#timing.startAt) return undefined;
    return last;
  }

  #nextInterval(after: number): number {
    const every = this.#timing.everyMs!;
    if (after < this.#anchor) return this.#anchor;
    return this.#anchor + (Math.floor((after - this.#anchor) / every) + 1) * every;
  }

  #lastInterval(until: number): number | undefined {
    if (until < this.#anchor) return undefined;
    const every = this.#timing.everyMs!;
    return this.#anchor + Math.floor((until - this.#anchor) / every) * every;
  }
}
