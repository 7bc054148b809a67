import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("./worker-child-main.js", import.meta.url));

/** What the child's tool printed when it started a call. */
export interface StartedCall {
  readonly tool: string;
  readonly key: string;
  readonly attempt: number;
}

export interface WorkerChild {
  /** The next call one of its tools started (in order); rejects, saying so, if none starts within `deadlineMs`. */
  started(deadlineMs?: number): Promise<StartedCall>;
  /** Makes the held call with this idempotency key return `{ finished: true }`. */
  finish(key: string): void;
  /** The next line the worker writes on stderr (what its default `onError` prints), in order; rejects if none comes within `deadlineMs`. */
  stderrLine(deadlineMs?: number): Promise<string>;
  /** SIGKILLs it and waits for it to exit. */
  kill(): Promise<void>;
}

/** How long `stderrLine` waits before failing: a line the worker owes comes within a second or two. */
const STDERR_DEADLINE_MS = 20_000;
/** How long `started` waits before failing: a call queued for the worker reaches it within a poll or two, even at load 25. */
const STARTED_DEADLINE_MS = 60_000;

/** Starts `worker-child-main` serving `tools` (each holds its calls until `finish`). */
export function startWorkerChild(baseUrl: string, apiKey: string, tools: readonly string[]): WorkerChild {
  const child = spawn(process.execPath, [MAIN, baseUrl, apiKey, tools.join(",")], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = once(child, "close");
  const calls = lineQueue<StartedCall>();
  const errors = lineQueue<string>();
  createInterface({ input: child.stdout }).on("line", (line) => calls.push(JSON.parse(line) as StartedCall));
  createInterface({ input: child.stderr }).on("line", (line) => errors.push(line));
  return {
    started: (deadlineMs = STARTED_DEADLINE_MS) =>
      within(calls.next(), deadlineMs, `no call reached the worker (serving ${tools.join(", ")}) within ${deadlineMs} ms`),
    finish: (key) => child.stdin.write(`finish ${key}\n`),
    stderrLine: (deadlineMs = STDERR_DEADLINE_MS) => within(errors.next(), deadlineMs, `the worker wrote no line on stderr within ${deadlineMs} ms`),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Items in arrival order, each taken once by `next` (at once if it arrived, else when it does). */
function lineQueue<T>(): { readonly push: (item: T) => void; readonly next: () => Promise<T> } {
  const ready: T[] = [];
  const waiting: ((item: T) => void)[] = [];
  return {
    push: (item) => {
      const next = waiting.shift();
      if (next) next(item);
      else ready.push(item);
    },
    next: () => (ready.length > 0 ? Promise.resolve(ready.shift()!) : new Promise((resolve) => waiting.push(resolve))),
  };
}

/** `promise`, or a rejection saying `what` did not happen once `ms` passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
