import type { Clock } from "../clock.js";
import type { EngineEvent } from "../runs/engine-events.js";
import type { RunStore } from "../store/run-store.js";
import type { ScheduleRecord, ScheduleStore } from "../store/schedule-store.js";

/** What a fire's start comes to. */
export type FireStart =
  /** A run exists for the fire's key: created now, or found (`existing`). */
  | { readonly kind: "started"; readonly runId: string; readonly existing: boolean }
  /** The run could not be created, for a reason that starting again would not change (the script no longer type-checks, the toolset is gone). */
  | { readonly kind: "refused"; readonly reason: string };

/**
 * What the schedules need of the engine: its store, clock and identity, and a way to start and
 * cancel the runs of fires (the engine's own `start`, with the fire's idempotency key).
 */
export interface ScheduleHost {
  readonly schedules: ScheduleStore;
  readonly runs: Pick<RunStore, "getRun">;
  readonly clock: Clock;
  /** This engine's holder id: the fires it claims are held by it. */
  readonly holder: string;
  /** Starts the fire's run with the key: one run per key, however often and wherever this is called. */
  start(schedule: ScheduleRecord, fireAt: number, key: string): Promise<FireStart>;
  /** Cancels a run (overlap `cancel_previous`). */
  cancel(runId: string, reason: string): Promise<unknown>;
  emit(event: EngineEvent): void;
}
