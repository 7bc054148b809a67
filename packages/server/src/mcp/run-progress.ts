/**
 * `notifications/progress` for a `tools/call` whose client sent a progress token: what the run the
 * call started or follows is doing (its status, how many journal entries, what it waits for).
 *
 * The agent tools' handlers only return when the run ends, parks or the wait passes, so the runs
 * are learned from the client's own answers: `RunWatch.fetch` wraps the client's `fetch` and tells
 * the call in progress (found by `AsyncLocalStorage`, so concurrent calls never see each other's
 * runs) of every run an answer carries. Between answers (a held long poll) the run is read again
 * every `PROGRESS_POLL_MS`, through the same client and scope.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { terminalStatuses, type RunWait } from "@tapedeck/protocol";
import type { Fetch, Run } from "@tapedeck/sdk";

/** How often a run is read again while a call holds: often enough to show movement, rarely enough to cost nothing. */
export const PROGRESS_POLL_MS = 2000;

/** Sends one progress notification: `progress` grows with each. */
export type ProgressReport = (progress: number, message: string) => Promise<void>;

interface Watcher {
  seen(run: Run): void;
}

export class RunWatch {
  readonly #calls = new AsyncLocalStorage<Watcher>();

  /** `inner`, telling the call in progress of each run in an answer (a start's, a fork's, a read's). */
  fetch(inner: Fetch): Fetch {
    return async (input, init) => {
      const response = await inner(input, init);
      const watcher = this.#calls.getStore();
      if (watcher !== undefined && response.ok) {
        const run = runOf(
          new URL(input).pathname,
          init.method ?? "GET",
          await response
            .clone()
            .json()
            .catch(() => undefined),
        );
        if (run !== undefined) watcher.seen(run);
      }
      return response;
    };
  }

  /**
   * Runs `call`, reporting each change of the runs it reaches, and reading the latest of them
   * with `read` every `PROGRESS_POLL_MS` until it ends. Stops reporting when `call` settles.
   */
  async reporting<T>(report: ProgressReport, read: (runId: string) => Promise<Run>, call: () => Promise<T>): Promise<T> {
    let count = 0;
    let last = "";
    let current: Run | undefined;
    let done = false;
    // The notifications in order, each sent once the one before is: the call's answer waits for them,
    // since a client drops a progress notification that comes after its request's answer.
    let sent = Promise.resolve();
    const watcher: Watcher = {
      seen: (run) => {
        // A poll's read that answers after a newer one (it was sent earlier) is not news: the run moves forward only.
        if (current !== undefined && current.id === run.id && isOlder(run, current)) return;
        current = run;
        const message = progressText(run);
        if (done || message === last) return;
        last = message;
        const progress = ++count;
        sent = sent.then(() => report(progress, message)).catch(() => undefined);
      },
    };
    const timer = setInterval(() => {
      if (current !== undefined && !terminalStatuses.includes(current.status)) this.#calls.run(watcher, () => read(current!.id)).catch(() => undefined);
    }, PROGRESS_POLL_MS);
    try {
      return await this.#calls.run(watcher, call);
    } finally {
      done = true;
      clearInterval(timer);
      await sent;
      // A turn of the event loop between the last notification and the answer: the SDK's client
      // handles a notification a microtask after an answer read in the same chunk, and drops it as
      // late. Separate writes usually arrive in separate reads; under load they may not.
      if (count > 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** Whether `run` is an earlier state of `than` (the same run): fewer journal entries, or not ended where `than` has. */
function isOlder(run: Run, than: Run): boolean {
  if (run.journalLength !== than.journalLength) return run.journalLength < than.journalLength;
  return terminalStatuses.includes(than.status) && !terminalStatuses.includes(run.status);
}

/** The run an answer carries: `POST /v1/runs` and `…/fork` answer `{ run }`, `GET /v1/runs/:id` the run. */
function runOf(path: string, method: string, body: unknown): Run | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  if (method === "POST" && (path === "/v1/runs" || /^\/v1\/runs\/[^/]+\/fork$/.test(path))) return isRun((body as { run?: unknown }).run);
  if (method === "GET" && /^\/v1\/runs\/[^/]+$/.test(path)) return isRun(body);
  return undefined;
}

function isRun(value: unknown): Run | undefined {
  const run = value as Partial<Run> | undefined;
  return typeof run?.id === "string" && typeof run.status === "string" && typeof run.journalLength === "number" ? (run as Run) : undefined;
}

/** One line: `run <id> waiting (5 journal entries): signal "approved"`. */
export function progressText(run: Run): string {
  const waits = run.status === "waiting" && run.waits !== undefined && run.waits.length > 0 ? `: waits for ${run.waits.map(waitText).join(", ")}` : "";
  return `run ${run.id} ${run.status} (${run.journalLength} journal entries)${waits}`;
}

function waitText(wait: RunWait): string {
  switch (wait.kind) {
    case "sleep":
      return `a sleep until ${new Date(wait.until).toISOString()}`;
    case "signal":
      return `the signal ${JSON.stringify(wait.name)}`;
    case "approval":
    case "parked":
    case "rate_limit":
      return `${wait.kind === "rate_limit" ? "a rate limit on" : wait.kind === "approval" ? "approval of" : "a decision on"} #${wait.seq} ${wait.tool}`;
    case "child":
      return `the workflow run ${wait.runId}`;
    case "worker":
      return `a worker to take #${wait.seq} ${wait.tool}`;
  }
}
