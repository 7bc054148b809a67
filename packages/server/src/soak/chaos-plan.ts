/**
 * When the soak strikes: at moments drawn at random from a seeded generator (the seed is printed,
 * so a failing soak can be run again as it was), as points of the workload's progress (calls
 * that reached a tool's server), not of wall-clock time. So every strike lands while the
 * workload runs, however fast or slow the machine is, and no strike waits on a timer.
 */

/** A small seeded generator (mulberry32): the same seed gives the same plan. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a strike does. */
export type StrikeKind =
  /** SIGKILL a server node (chosen at random among those up), then start it again on its data folder. */
  | "kill-node"
  /** SIGKILL a worker, then start it again. */
  | "kill-worker"
  /** `pg_ctl restart -m fast`: every connection of every node is terminated. */
  | "restart-db"
  /** `pg_ctl stop -m fast`, the database unreachable for a while, then started again. */
  | "db-outage";

export interface Strike {
  readonly kind: StrikeKind;
  /** Strikes once this many calls reached the tools' servers. */
  readonly atCalls: number;
}

/** `counts` strikes of each kind at random points between 5% and 70% of `totalCalls`, in order of progress. */
export function chaosPlan(random: () => number, totalCalls: number, counts: Readonly<Partial<Record<StrikeKind, number>>>): Strike[] {
  const strikes: Strike[] = [];
  for (const [kind, count] of Object.entries(counts) as [StrikeKind, number][]) {
    for (let i = 0; i < count; i++) strikes.push({ kind, atCalls: Math.floor(totalCalls * (0.05 + 0.65 * random())) });
  }
  return strikes.sort((a, b) => a.atCalls - b.atCalls);
}
