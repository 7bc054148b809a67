/**
 * The engine's only source of time. Real runs use `systemClock`; `test_script` uses a virtual
 * clock that jumps over sleeps. Journal timestamps come from here, and the sandbox's `Date`
 * comes from the journal, so a script never reads a clock directly.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
