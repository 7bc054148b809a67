import type { RunWait } from "./run.js";

/**
 * A host tool's call that waits for a worker, in the words every reader of a run shows (the
 * agent tools' text, `tapedeck show`): which tool, and how long no worker that could take it
 * has polled, as of `now`.
 */
export function workerWaitText(wait: RunWait & { readonly kind: "worker" }, now: number): string {
  const seconds = Math.max(0, Math.round((now - wait.lastPollAt) / 1000));
  return `waiting for a worker to serve \`${wait.tool}\` (no worker has polled for ${seconds} s)`;
}
