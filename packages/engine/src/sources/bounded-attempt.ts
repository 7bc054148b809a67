import { formatDuration, toolFailure, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { QueueWatcher, ToolCallRequest, ToolOutcome, ToolSource } from "./tool-source.js";

/**
 * One attempt of a call at its source, bounded by its tool's policy: how a script's call is sent
 * (`RunDispatcher`) and how a user tool's invocation of another tool is (`UserToolSource`).
 *
 * Invariants:
 * - The attempt ends with the first of: the source's outcome, the tool's `timeout`, its
 *   `queueTimeout`, and `stop`. When one of the last three ends it, the request's signal is
 *   aborted (after the attempt has its outcome, so that the source's abort handlers see it ended).
 * - A host tool's `timeout` starts only once a worker has taken the attempt: waiting for a worker
 *   is not part of it. Its `queueTimeout` bounds that wait, and then nothing was sent. Any other
 *   tool's `timeout` starts at once.
 * - `stop` ends it with `stopped` (an attempt that had ended stays as it ended).
 * - Rejects if the source rejects (or throws) first.
 */
export interface BoundedAttempt {
  readonly outcome: Promise<ToolOutcome>;
  /** Ends the attempt now (interrupted), aborting its signal with `reason`. */
  stop(reason: Error): void;
}

export function boundedAttempt(
  source: Pick<ToolSource, "call">,
  request: Omit<ToolCallRequest, "signal" | "queue">,
  options: {
    readonly clock: Clock;
    /** Also hears whether a worker took the attempt (the call's own watcher). */
    readonly queue?: QueueWatcher | undefined;
    /** The outcome `stop` ends the attempt with. */
    readonly stopped: ToolOutcome;
    /** Stopped before it is sent: the source is still called (it gives up what was staged for it), with its signal aborted. */
    readonly stopFirst?: Error | undefined;
  },
): BoundedAttempt {
  const controller = new AbortController();
  const { tool } = request;
  const { policy } = tool;
  const queued = tool.source === "host";
  let cancelTimer = (): void => {};
  let done = false;
  let settle: (outcome: ToolOutcome) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const outcome = new Promise<ToolOutcome>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const end = (): boolean => {
    if (done) return false;
    done = true;
    cancelTimer();
    return true;
  };
  /** Ends the attempt with `failure` at `at`, aborting what the source started. */
  const failAt = (at: number, failure: () => ToolFailure, why: string): void => {
    cancelTimer();
    cancelTimer = options.clock.setTimer(at, () => {
      if (end()) settle({ kind: "failure", failure: failure() });
      controller.abort(new Error(why));
    });
  };
  const timeout = (): void => {
    if (policy.timeoutMs !== undefined) failAt(options.clock.now() + policy.timeoutMs, () => timedOut(tool, request.attempt), "timeout");
  };
  // End before aborting: the source's abort handlers run after the attempt has its outcome.
  const stop = (reason: Error): void => {
    if (!end()) return;
    settle(options.stopped);
    controller.abort(reason);
  };
  let lastPollAt: number | undefined;
  const watcher: QueueWatcher = {
    waiting: (polledAt) => {
      lastPollAt = polledAt;
      if (!done) options.queue?.waiting(polledAt);
    },
    taken: () => {
      if (done) return;
      timeout();
      options.queue?.taken();
    },
  };
  if (options.stopFirst !== undefined) {
    stop(options.stopFirst);
  } else if (!queued) {
    timeout();
  } else if (policy.queueTimeoutMs !== undefined) {
    const waited = policy.queueTimeoutMs;
    failAt(
      options.clock.now() + waited,
      () => queueTimedOut(tool, waited, lastPollAt === undefined ? undefined : options.clock.now() - lastPollAt),
      "no worker took the call in time",
    );
  }
  let sent: Promise<ToolOutcome>;
  try {
    sent = source.call({ ...request, signal: controller.signal, ...(queued ? { queue: watcher } : {}) });
  } catch (error) {
    end();
    fail(error);
    return { outcome, stop };
  }
  sent.then(
    (answered) => {
      if (end()) settle(answered);
    },
    (error: unknown) => {
      if (end()) fail(error);
    },
  );
  return { outcome, stop };
}

function timedOut(tool: PinnedTool, attempt: number): ToolFailure {
  const taken = tool.source === "host" ? " after a worker took it" : "";
  return toolFailure(
    "timeout",
    `${tool.group}.${tool.name} did not answer within ${tool.policy.timeoutMs} ms${taken} (attempt ${attempt}); its outcome is unknown. Raise the tool's timeout policy, or catch this error and decide.`,
    { retryable: true },
  );
}

/** No worker took a host tool's call in time: nothing was sent, unlike a timeout. */
function queueTimedOut(tool: PinnedTool, waitedMs: number, sinceLastPollMs: number | undefined): ToolFailure {
  const path = `${tool.group}.${tool.name}`;
  const polled = sinceLastPollMs === undefined ? "" : ` (no worker has polled for it for ${Math.round(sinceLastPollMs / 1000)} s)`;
  return toolFailure(
    "queue_timeout",
    `No worker took the call to ${path} within ${formatDuration(waitedMs)}, its queueTimeout policy${polled}: nothing was sent, so calling it again is safe once a worker serving ${path} runs. Catch this error to go on without it, or try again later.`,
    { retryable: true, details: { tool: path, queueTimeoutMs: waitedMs } },
  );
}
