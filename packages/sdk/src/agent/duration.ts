/** A duration option ("30s", "2m", "30d", or milliseconds) in ms. Throws a `TypeError` naming `option` for anything else. */
export function durationMs(value: string | number, option: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  const match = typeof value === "string" ? /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(value.trim()) : null;
  if (!match) throw new TypeError(`agentTools: ${option} must be a duration such as "30s", "2m", "30d", or milliseconds; got ${JSON.stringify(value)}.`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
