/**
 * Durations as people and models write them: "250ms", "30s", "5m", "2h", "10d", "1y", or a
 * number of milliseconds. A year is 365 days: schedules never need calendar years here.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 } as const;

const PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|y)\s*$/;

/** Parses a duration; throws a `TypeError` that says what is accepted. */
export function parseDuration(value: string | number, what = "duration"): number {
  if (typeof value === "number") {
    if (Number.isFinite(value) && value >= 0) return value;
    throw new TypeError(`${what} must be a non-negative number of milliseconds, got ${value}`);
  }
  const match = PATTERN.exec(value);
  if (!match) {
    throw new TypeError(`${what} "${value}" is not a duration: write a number and a unit, such as "250ms", "30s", "5m", "2h", "10d" or "1y"`);
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/** A duration for messages: 90000 → "1m 30s", 350 → "350ms". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join(" ");
}
