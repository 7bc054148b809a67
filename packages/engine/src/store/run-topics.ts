/**
 * The notifier topics of run changes, published by both stores once a write of a run is
 * durable (never before: a listener that looks in the store must find what woke it). Readers of
 * the live event streams listen to them; like every topic they carry nothing, may be merged or
 * missed, and the listener's poll makes up for a missed one (see `notifier.ts`).
 */

/** Published after every commit that adds to a run's journal or changes its row through `append`/`createRun`. */
export function runJournalTopic(runId: string): string {
  return `run/${runId}`;
}

/** Published after a commit that creates a run or changes its status, waits, output or error (what `changedRuns` orders). */
export const RUN_CHANGES_TOPIC = "run-changes";
