import { Worker } from "node:worker_threads";
import type { ResultValues, SandboxWorkerData, WorkerMessage, WorkerRequest } from "./messages.js";
import { SandboxLostError } from "./sandbox.js";

/**
 * The main thread's end of one sandbox worker. Invariants:
 * - each request gets one answer: the worker's result, or `SandboxLostError` if the worker
 *   ends first; once ended, every later request rejects with the same error;
 * - the worker keeps the process alive only while a request is outstanding (`ref` while
 *   waiting, `unref` when idle), so an idle pool never holds the process open;
 * - `retired` is set once the worker's WASM heap passed its limit (the heap never shrinks):
 *   the pool places no new sandbox on it and ends it when its last sandbox is disposed.
 */

/** A request as the caller writes it: the client numbers it. */
type Unnumbered<R> = R extends unknown ? Omit<R, "id"> : never;

interface Waiter {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export interface WorkerClientEvents {
  /** The worker's heap passed its limit. */
  onRetired(client: WorkerClient): void;
  /** The worker ended (crash, `terminate`). */
  onExit(client: WorkerClient): void;
}

export class WorkerClient {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private failure: string | undefined;
  private closing: string | undefined;
  /** Sandboxes placed on this worker and not yet disposed. */
  sandboxes = 0;
  /** The worker loaded its module (a worker that dies before is not replaced in a loop). */
  ready = false;
  retired = false;
  /** Set once the worker has ended. */
  lost: SandboxLostError | undefined;

  constructor(
    data: SandboxWorkerData,
    private readonly events: WorkerClientEvents,
  ) {
    this.worker = new Worker(new URL("./sandbox-worker.js", import.meta.url), {
      workerData: data,
      // The worker runs only our compiled modules; the parent's flags (`--input-type`, `-e`
      // helpers, loaders) can keep it from starting at all.
      execArgv: [],
    });
    this.worker.on("message", (message: WorkerMessage) => this.receive(message, data.heapLimitBytes));
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
      if (this.waiting.size === 0) this.worker.ref();
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

  private receive(message: WorkerMessage, heapLimitBytes: number): void {
    if (message.type === "ready") {
      this.ready = true;
      return;
    }
    const waiter = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    // Once terminating, stay ref'd: a late answer must not let the process end before `terminate()` resolves.
    if (this.waiting.size === 0 && this.closing === undefined) this.worker.unref();
    if (message.heapBytes > heapLimitBytes && !this.retired) {
      this.retired = true;
      this.events.onRetired(this);
    }
    if (waiter === undefined) return;
    if (message.outcome.ok) waiter.resolve(message.outcome.value);
    else waiter.reject(new Error(message.outcome.message));
  }

  private exited(code: number): void {
    const why =
      this.closing ??
      `Its worker ended unexpectedly (exit code ${code}${this.failure === undefined ? "" : `: ${this.failure}`}).`;
    this.lost = new SandboxLostError(`The sandbox was lost. ${why} Rebuild it by replaying the run's journal.`);
    for (const waiter of this.waiting.values()) waiter.reject(this.lost);
    this.waiting.clear();
    this.events.onExit(this);
  }
}
