import type { FireOutcome, FireRecord, Schedule as EngineSchedule } from "@tapedeck/engine";
import type { Fire, Schedule } from "@tapedeck/protocol/api";

/** A schedule as the API shows it: the engine's record, flattened (timing, action and policies side by side). */
export function scheduleView(record: EngineSchedule): Schedule {
  const { timing, action, policies } = record;
  return {
    id: record.id,
    toolset: action.toolset,
    ...(action.workflow === undefined ? {} : { workflow: action.workflow }),
    ...(action.source === undefined ? {} : { source: action.source }),
    input: action.input,
    ...(timing.cron === undefined ? {} : { cron: timing.cron }),
    ...(timing.everyMs === undefined ? {} : { everyMs: timing.everyMs }),
    timezone: timing.timezone,
    ...(timing.startAt === undefined ? {} : { startAt: timing.startAt }),
    ...(timing.endAt === undefined ? {} : { endAt: timing.endAt }),
    ...(timing.maxFires === undefined ? {} : { maxFires: timing.maxFires }),
    overlap: policies.overlap,
    catchup: policies.catchup,
    catchupWindowMs: policies.catchupWindowMs,
    labels: record.labels ?? {},
    ...(record.namespace === undefined ? {} : { namespace: record.namespace }),
    ...(action.ttlMs === undefined ? {} : { ttlMs: action.ttlMs }),
    ...(record.note === undefined ? {} : { note: record.note }),
    paused: record.paused,
    ...(record.nextFireAt === undefined ? {} : { nextFireAt: record.nextFireAt }),
    upcoming: record.upcoming,
    fireCount: record.fireCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** A fire as the API shows it (which process holds it is the servers' business). */
export function fireView(fire: FireRecord | FireOutcome): Fire {
  return {
    scheduleId: fire.scheduleId,
    fireAt: fire.fireAt,
    kind: fire.kind,
    state: fire.state,
    ...(fire.runId === undefined ? {} : { runId: fire.runId }),
    ...(fire.reason === undefined ? {} : { reason: fire.reason }),
  };
}
