import type { RunWait } from "@tapedeck/protocol";
import type { Run } from "@tapedeck/protocol/api";
import type { RunEventsOptions, RunStreamItem } from "./run-events.js";

/** A wait for a decision: an approval, or a parked call a human must settle. */
export type ApprovalWait = RunWait & { readonly kind: "approval" | "parked" };
export type SignalWait = RunWait & { readonly kind: "signal" };

export interface FollowOptions {
  /** Called once for each call that waits for a decision, in the run or in a workflow child it waits on (`run` says which). Awaited before the stream is read on. */
  readonly onApproval?: (wait: ApprovalWait, run: Run) => void | Promise<void>;
  /** Called once for each `signal()` the run (or a child it waits on) waits for. Awaited likewise. */
  readonly onSignalWait?: (wait: SignalWait, run: Run) => void | Promise<void>;
  /** Called with each event of the run's own stream (not its children's). */
  readonly onEvent?: (event: RunStreamItem) => void;
  /** Stops following: the promise then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Follows a run to its end over its event stream (which stays open through sleeps, waits and
 * children, and resumes by itself after a dropped connection), telling `onApproval` and
 * `onSignalWait` of what it waits on; the workflow children it waits on are followed too, for
 * their approvals and signals. Resolves with the run as it ended. Rejects as `events` does.
 */
export async function followRun(
  events: (runId: string, options: RunEventsOptions) => AsyncIterable<RunStreamItem>,
  runId: string,
  options: FollowOptions,
): Promise<Run> {
  const stop = new AbortController();
  const abort = (): void => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", abort, { once: true });
  const children = new Map<string, Promise<unknown>>();
  try {
    const ended = await follow(events, runId, options, stop.signal, children, true);
    if (ended === undefined) throw options.signal?.reason ?? new Error(`Following run ${runId} was stopped.`);
    return ended;
  } finally {
    options.signal?.removeEventListener("abort", abort);
    stop.abort();
    // A child's follow ends with the parent's: its failure is not the parent's.
    await Promise.allSettled(children.values());
  }
}

async function follow(
  events: (runId: string, options: RunEventsOptions) => AsyncIterable<RunStreamItem>,
  runId: string,
  options: FollowOptions,
  signal: AbortSignal,
  children: Map<string, Promise<unknown>>,
  own: boolean,
): Promise<Run | undefined> {
  const told = new Set<string>();
  for await (const event of events(runId, { signal })) {
    if (own) options.onEvent?.(event);
    if (event.event === "end") return event.data;
    if (event.event !== "run") continue;
    for (const wait of event.data.waits ?? []) {
      const key = `${wait.kind}:${wait.seq}`;
      if (told.has(key)) continue;
      told.add(key);
      if ((wait.kind === "approval" || wait.kind === "parked") && options.onApproval) await options.onApproval(wait, event.data);
      else if (wait.kind === "signal" && options.onSignalWait) await options.onSignalWait(wait, event.data);
      else if (wait.kind === "child" && !children.has(wait.runId)) children.set(wait.runId, follow(events, wait.runId, options, signal, children, false));
    }
  }
  return undefined;
}
