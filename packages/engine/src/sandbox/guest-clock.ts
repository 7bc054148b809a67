/**
 * The guests' clock and time zone, installed once per sandbox worker. QuickJS compiled by
 * Emscripten reads the time (`Date.now()`) and the local time zone (`new Date(…)` getters and
 * `getTimezoneOffset()`) through the `Date` of the JavaScript realm that loaded it, so the
 * worker replaces its own global `Date`:
 * - `Date.now()` and `new Date()` return the time of the step being run (`setGuestNow`);
 * - local time is UTC: the host's time zone never reaches a guest.
 * The worker runs one step at a time, so one clock serves all its sandboxes. Nothing else in
 * the worker reads `Date`; Node's internals use their own captured copies.
 */
const HostDate = globalThis.Date;
let now = 0;

/** Sets what the guest's `Date.now()` returns until the next call. */
export function setGuestNow(ms: number): void {
  now = ms;
}

class GuestDate extends HostDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(now);
    else if (args.length === 1) super(args[0] as string | number | Date);
    else super(HostDate.UTC(...(args as [number, number, ...number[]])));
  }
  static override now(): number {
    return now;
  }
  override getTimezoneOffset(): number {
    return 0;
  }
  override getFullYear(): number {
    return this.getUTCFullYear();
  }
  override getMonth(): number {
    return this.getUTCMonth();
  }
  override getDate(): number {
    return this.getUTCDate();
  }
  override getDay(): number {
    return this.getUTCDay();
  }
  override getHours(): number {
    return this.getUTCHours();
  }
  override getMinutes(): number {
    return this.getUTCMinutes();
  }
  override getSeconds(): number {
    return this.getUTCSeconds();
  }
  override getMilliseconds(): number {
    return this.getUTCMilliseconds();
  }
}

/** Replaces the worker's global `Date`. Call once, before the WASM module is loaded. */
export function installGuestClock(): void {
  globalThis.Date = GuestDate as DateConstructor;
}
