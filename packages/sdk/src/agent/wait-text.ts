/**
 * What a run waits for, in words the model can act on: when a sleep ends, which signal to send
 * and how, which call waits for a person's approval (the model cannot give it), which call was
 * held back and why.
 */
import { workerWaitText, type ParkReason, type RunWait } from "@tapedeck/protocol";
import { bound, boundList, isoTime, summarize } from "./text-limits.js";
import { VALUE_CHARS } from "./run-trace.js";

/** At most this many waits are listed: a run that waits for more is described by its first ones. */
export const WAITS_SHOWN = 20;

/** One line per wait, with what the model can do about it; `now` (default `Date.now()`) says how long a worker has been missed. */
export function waitLines(runId: string, waits: readonly RunWait[], now = Date.now()): string[] {
  const { items, cut } = boundList(waits, WAITS_SHOWN, "first", "waits");
  return [...items.map((wait) => `- ${waitLine(runId, wait, now)}`), ...(cut ? [cut] : [])];
}

function waitLine(runId: string, wait: RunWait, now: number): string {
  const run = JSON.stringify(runId);
  switch (wait.kind) {
    case "sleep":
      return `call #${wait.seq}: sleeping until ${isoTime(wait.until)}; it goes on by itself then.`;
    case "signal":
      return (
        `call #${wait.seq}: waiting for the signal ${JSON.stringify(wait.name)}${wait.until === undefined ? "" : ` until ${isoTime(wait.until)} (then signal() throws)`}. ` +
        `Send it with signal_run({ run_id: ${run}, name: ${JSON.stringify(wait.name)}, payload }) when the script should go on.`
      );
    case "approval":
      return `call #${wait.seq}: ${wait.tool}(${summarize(wait.args, VALUE_CHARS)}) waits for approval. The user or the application approves or rejects it; you cannot.`;
    case "parked":
      return `call #${wait.seq}: ${wait.tool}(${summarize(wait.args, VALUE_CHARS)}) was held back before being sent: ${bound(wait.message, VALUE_CHARS)}. ${PARKED_NEXT[wait.reason]}`;
    case "rate_limit":
      return `call #${wait.seq}: ${wait.tool} is over its rate limit; the call waits until ${isoTime(wait.until)} for a place in the window and goes on by itself then. Nothing was sent yet.`;
    case "child":
      return `call #${wait.seq}: waiting for the workflow ${wait.workflow} (run ${JSON.stringify(wait.runId)}) to end; it goes on by itself then. Follow it with get_run({ run_id: ${JSON.stringify(wait.runId)} }).`;
    case "worker":
      return `call #${wait.seq}: ${workerWaitText(wait, now)}. Nothing was sent yet; the call goes on once a worker takes it. The application runs the workers; you cannot start one.`;
  }
}

/** A few words per wait, for a list of runs. */
export function waitSummary(wait: RunWait): string {
  switch (wait.kind) {
    case "sleep":
      return `sleep until ${isoTime(wait.until)}`;
    case "signal":
      return `signal ${JSON.stringify(wait.name)}`;
    case "approval":
      return `approval of ${wait.tool}`;
    case "parked":
      return `${wait.tool} held back`;
    case "rate_limit":
      return `${wait.tool} rate limit until ${isoTime(wait.until)}`;
    case "child":
      return `workflow ${wait.workflow} (${wait.runId})`;
    case "worker":
      return `a worker for ${wait.tool}`;
  }
}

/** What can happen to a parked call, by why it was parked. */
const PARKED_NEXT: Record<ParkReason, string> = {
  "tool.schema_changed":
    "The tool's schema changed since the run started: the application approves the call (sent as it is) or rejects it; you can also cancel_run, or retry_run with a script written for the new schema.",
  "credentials.expired": "The credentials it needs expired: the application renews them and approves the call, or rejects it; you cannot.",
};
