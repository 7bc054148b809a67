import type { RateWindow } from "../../../store/rate-limit-store.js";

/**
 * The property a rate limiter must have, checked on what it did: in every sliding window (of
 * every length it enforces), the calls it accepted are at most the limit. The check looks at
 * each window that ends at an accepted call — the fullest windows end at one.
 */
export function slidingWindowViolation(accepted: readonly number[], windows: readonly RateWindow[]): string | undefined {
  const sorted = [...accepted].sort((a, b) => a - b);
  for (const window of windows) {
    let start = 0;
    for (let end = 0; end < sorted.length; end++) {
      while (sorted[start]! <= sorted[end]! - window.ms) start++;
      const inside = end - start + 1;
      if (inside > window.limit) return `${inside} calls accepted in the ${window.ms} ms before ${sorted[end]}, more than ${window.limit}`;
    }
  }
  return undefined;
}

/** A fixed-window counter (what IronClaw keeps in memory), for showing what the property catches. */
export class FixedWindowCounter {
  readonly #counts = new Map<string, number>();

  constructor(private readonly window: RateWindow) {}

  take(now: number): boolean {
    const slot = `${Math.floor(now / this.window.ms)}`;
    const count = this.#counts.get(slot) ?? 0;
    if (count >= this.window.limit) return false;
    this.#counts.set(slot, count + 1);
    return true;
  }
}
