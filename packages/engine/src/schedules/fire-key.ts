/**
 * The idempotency key of a fire's run, derived from (schedule, fire time) alone: every process
 * that starts the fire (its claimer, one that took it over after a crash, a second node racing
 * it) names the same run, so the store's unique key keeps it one run.
 */
export function fireKey(scheduleId: string, fireAt: number): string {
  return `tapedeck:schedule:${scheduleId}/${new Date(fireAt).toISOString()}`;
}

/** The label every fire's run carries: the runs of a schedule are listed by it. */
export const SCHEDULE_LABEL = "tapedeck.schedule";
