/**
 * What happens to runs, in the server's log, from the engine's events: a run parked (what it
 * waits for, when it wakes), ended (its status; a failure's kind and code), a call waiting for
 * a decision; and the engine's background faults. Never arguments, results, outputs or error
 * messages: those are the tenants' data (read them with `tapedeck show` or the API).
 */
import type { Engine, EngineEvent } from "@tapedeck/engine";
import type { RunWait } from "@tapedeck/protocol";
import type { ServerLogger } from "./server-logger.js";

/** Logs the engine's events until the returned function is called. */
export function logRunEvents(engine: Engine, logger: ServerLogger): () => void {
  return engine.on((event) => logEvent(logger, event));
}

function logEvent(logger: ServerLogger, event: EngineEvent): void {
  switch (event.type) {
    case "run.waiting":
      logger.info(
        { runId: event.runId, waits: event.waits.map(describeWait), ...(event.wakeAt === undefined ? {} : { wakeAt: new Date(event.wakeAt).toISOString() }) },
        "run parked",
      );
      return;
    case "run.ended": {
      const { end } = event;
      const failure = end.status === "failed" ? { error: end.error.kind, ...(end.error.failure ? { code: end.error.failure.code } : {}) } : {};
      logger.info({ runId: event.runId, status: end.status, ...failure }, "run ended");
      return;
    }
    case "engine.error":
      logger.error({ err: event.error }, "background fault (runs are intact)");
      return;
    case "schedule.fired":
      logger.info(
        {
          schedule: event.scheduleId,
          fireAt: new Date(event.fireAt).toISOString(),
          state: event.state,
          ...(event.runId ? { runId: event.runId } : {}),
          ...(event.reason ? { reason: event.reason } : {}),
        },
        "schedule fired",
      );
      return;
    default:
      logger.info({ runId: event.runId, seq: event.wait.seq, tool: event.wait.tool, event: event.type }, "call waits for a decision");
  }
}

/** A wait in a few words: its kind, and the signal, call or workflow it names (never arguments). */
function describeWait(wait: RunWait): string {
  const named = "name" in wait ? ` ${JSON.stringify(wait.name)}` : "";
  const call = "tool" in wait ? ` #${wait.seq} ${wait.tool}` : "";
  const reason = "reason" in wait ? ` (${wait.reason})` : "";
  const child = "workflow" in wait ? ` ${wait.workflow} (${wait.runId})` : "";
  return `${wait.kind}${named}${call}${reason}${child}`;
}
