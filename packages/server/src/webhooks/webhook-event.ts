import type { EngineEvent, RunRecord } from "@tapedeck/engine";
import { WEBHOOK_OUTPUT_LIMIT_BYTES, type WebhookEvent, type WebhookEventType, type WebhookRunData } from "@tapedeck/protocol/api";

/** The webhook type of an engine event; undefined for events no endpoint is sent (engine faults, schedules' fires: their runs' events are sent). */
export function webhookType(event: EngineEvent): WebhookEventType | undefined {
  switch (event.type) {
    case "run.waiting":
    case "approval.requested":
    case "tool.schema_changed":
    case "credentials.expired":
      return event.type;
    case "run.ended":
      return `run.${event.end.status}`;
    case "engine.error":
    case "schedule.fired":
      return undefined;
  }
}

/** The body an endpoint gets for an engine event of `run`. */
export function webhookEvent(
  event: Exclude<EngineEvent, { type: "engine.error" | "schedule.fired" }>,
  run: RunRecord,
  id: string,
  createdAt: number,
): WebhookEvent {
  const base: WebhookRunData = {
    runId: run.id,
    toolset: run.toolsetId,
    ...(run.namespace === undefined ? {} : { namespace: run.namespace }),
    labels: run.labels ?? {},
  };
  const envelope = { id, createdAt };
  switch (event.type) {
    case "run.waiting":
      return { ...envelope, type: event.type, data: { ...base, waits: event.waits, ...(event.wakeAt === undefined ? {} : { wakeAt: event.wakeAt }) } };
    case "approval.requested":
    case "tool.schema_changed":
    case "credentials.expired":
      return { ...envelope, type: event.type, data: { ...base, wait: event.wait } };
    case "run.ended": {
      const { end } = event;
      if (end.status === "failed") return { ...envelope, type: "run.failed", data: { ...base, error: end.error } };
      if (end.status === "cancelled") return { ...envelope, type: "run.cancelled", data: { ...base, reason: end.reason } };
      // The run's own output (a recorded event may leave it out); a large one stays out of the
      // body: the receiver reads it with GET /v1/runs/:id.
      const output = run.output ?? end.output;
      const small = Buffer.byteLength(JSON.stringify(output)) <= WEBHOOK_OUTPUT_LIMIT_BYTES;
      return { ...envelope, type: "run.completed", data: { ...base, ...(small ? { output } : { outputOmitted: true }) } };
    }
  }
}
