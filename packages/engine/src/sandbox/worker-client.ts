import { Worker } from "node:worker_threads";
import type { ResultValues, SandboxWorkerData, WorkerMessage, WorkerRequest } from "./messages.js";
import { SandboxLostError } from "./sandbox.js";
import { wallNow, WorkerWatch } from "./worker-watch.js";

/**
 * The main thread's end of one sandbox worker. Invariants:
 * - each request gets one answer: the worker's result, or an error if the worker ends first
 *   (`StuckRequestError` for the request the watchdog stopped, `SandboxLostError` for the
 *   others, `culprit` for the one that was running when the worker died); once ended, every
 *   later request rejects with the same `SandboxLostError`;
 * - the watchdog: while a request is outstanding, the worker's watch is read every
 *   `WATCH_INTERVAL_MS`; a request still running `WATCHDOG_GRACE_MS` past the end of its budget
 *   is one the sandbox's interrupt handler cannot stop (a loop inside a C built-in), and the
 *   worker is terminated. It depends on nothing the stuck thread would have to do;
 * - the worker keeps the process alive only while a request is outstanding (`ref` while
 *   waiting, `unref` when idle), so an idle pool never holds the process open.
 */

/**
 * How long past its budget a request may run before the watchdog ends its worker. The interrupt
 * handler stops a script within milliseconds of its budget; this covers a garbage collection or
 * a descheduled thread on a loaded machine, and bounds how long a stuck script holds the
 * worker's other sandboxes (they are rebuilt on another worker by replay).
 */
export const WATCHDOG_GRACE_MS = 2_000;
/** How often the watchdog reads the watch while requests are outstanding. */
const WATCH_INTERVAL_MS = 250;

/** A request as the caller writes it: the client numbers it. */
type Unnumbered<R> = R extends unknown ? Omit<R, "id"> : never;

interface Waiter {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export interface WorkerClientEvents {
  /** The worker ended (crash, `terminate`, the watchdog). */
  onExit(client: WorkerClient): void;
}

/** The answer to the request the watchdog stopped: its sandbox turns it into the script's limit error. */
export class StuckRequestError extends Error {
  constructor() {
    super("The request ran past its budget where it could not be interrupted; its worker was ended.");
    this.name = "StuckRequestError";
  }
}

export class WorkerClient {
  private readonly worker: Worker;
  private readonly watch = new WorkerWatch();
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private failure: string | undefined;
  private closing: string | undefined;
  /** The request the watchdog stopped. */
  private stuck: number | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  /** Sandboxes placed on this worker and not yet disposed. */
  sandboxes = 0;
  /** The worker loaded its module (a worker that dies before is not replaced in a loop). */
  ready = false;
  /** Set once the worker has ended. */
  lost: SandboxLostError | undefined;

  constructor(
    private readonly events: WorkerClientEvents,
    private readonly graceMs = WATCHDOG_GRACE_MS,
  ) {
    const data: SandboxWorkerData = { watch: this.watch.buffer };
    this.worker = new Worker(new URL("./sandbox-worker.js", import.meta.url), {
      workerData: data,
      // The worker runs only our compiled modules; the parent's flags (`--input-type`, `-e`
      // helpers, loaders) can keep it from starting at all.
      execArgv: [],
    });
    this.worker.on("message", (message: WorkerMessage) => this.receive(message));
    this.worker.on("error", (error: Error) => {
      this.failure ??= `${error.name}: ${error.message}`;
    });
    this.worker.on("exit", (code: number) => this.exited(code));
    // After `on("message")`: adding that listener refs the worker's port again.
    this.worker.unref();
  }

  /** Sends a request; resolves with the worker's answer. */
  request<R extends Unnumbered<WorkerRequest>>(request: R): Promise<ResultValues[R["type"]]> {
    if (this.lost !== undefined) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise<ResultValues[R["type"]]>((resolve, reject) => {
      if (this.waiting.size === 0) {
        this.worker.ref();
        this.watchdog ??= setInterval(() => this.checkStuck(), WATCH_INTERVAL_MS).unref();
      }
      this.waiting.set(id, { resolve: (value) => resolve(value as ResultValues[R["type"]]), reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  /** Ends the worker; pending and later requests reject with `SandboxLostError(reason)`. */
  async terminate(reason: string): Promise<void> {
    if (this.lost !== undefined) return;
    this.closing ??= reason;
    // Ref first: an unref'd worker's exit does not keep the loop alive, and the process would
    // end (exit code 13, an unsettled await) before `terminate()` resolves.
    this.worker.ref();
    await this.worker.terminate();
  }

  private checkStuck(): void {
    const running = this.watch.read();
    if (running === undefined || this.stuck !== undefined || !this.waiting.has(running.request)) return;
    if (wallNow() <= running.deadline + this.graceMs) return;
    this.stuck = running.request;
    void this.terminate("Its worker was ended: a script on it ran past its CPU budget inside a built-in function, where it could not be interrupted.");
  }

  private receive(message: WorkerMessage): void {
    if (message.type === "ready") {
      this.ready = true;
      return;
    }
    const waiter = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    if (this.waiting.size === 0) this.quiet();
    if (waiter === undefined) return;
    if (message.outcome.ok) waiter.resolve(message.outcome.value);
    else waiter.reject(new Error(message.outcome.message));
  }

  /** Nothing outstanding: the watchdog stops, and the worker no longer keeps the process alive. */
  private quiet(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    // Once terminating, stay ref'd: a late answer must not let the process end before `terminate()` resolves.
    if (this.closing === undefined) this.worker.unref();
  }

  private exited(code: number): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    const why = this.closing ?? `Its worker ended unexpectedly (exit code ${code}${this.failure === undefined ? "" : `: ${this.failure}`}).`;
    const message = `The sandbox was lost. ${why} Rebuild it by replaying the run's journal.`;
    this.lost = new SandboxLostError(message);
    // The request the worker was running when it died, if any: its script may be the cause.
    const running = this.stuck === undefined && this.closing === undefined ? this.watch.read()?.request : undefined;
    for (const [id, waiter] of this.waiting) {
      if (id === this.stuck) waiter.reject(new StuckRequestError());
      else if (id === running) waiter.reject(new SandboxLostError(message, true));
      else waiter.reject(this.lost);
    }
    this.waiting.clear();
    this.events.onExit(this);
  }
}
