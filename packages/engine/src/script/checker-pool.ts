import { Worker } from "node:worker_threads";
import type { CheckOptions, ScriptDeclarations } from "./checker.js";
import type { CompiledScript } from "./compile.js";
import type { CheckResult } from "./diagnostic.js";

/**
 * Type-checking and transpiling off the caller's event loop: a checked script costs up to a few
 * seconds of CPU (see `script-size.ts`), and a server checking on its own loop answers nobody,
 * not even `/health`, meanwhile. Invariants:
 * - up to `size` worker threads, started when needed (the first check loads TypeScript there,
 *   about a second) and kept while the pool is open; a request goes to an idle worker, else
 *   waits for one, in arrival order;
 * - a request that takes longer than `timeoutMs` ends its worker (the next request gets a new
 *   one) and rejects; a worker that dies rejects its request and is replaced;
 * - idle workers never keep the process alive.
 */
export interface ScriptCheck {
  /** `ScriptChecker.check`, elsewhere. */
  check(source: string, declarations: ScriptDeclarations, options?: CheckOptions): Promise<CheckResult>;
  /** `compileScript`, elsewhere. */
  compile(source: string): Promise<CompiledScript>;
}

export type CheckerRequest =
  | { readonly type: "check"; readonly id: number; readonly source: string; readonly declarations: ScriptDeclarations; readonly options?: CheckOptions }
  | { readonly type: "compile"; readonly id: number; readonly source: string };

export type CheckerReply =
  | { readonly id: number; readonly ok: true; readonly value: CheckResult | CompiledScript }
  | { readonly id: number; readonly ok: false; readonly message: string };

export interface CheckerPoolOptions {
  /** Worker threads at most. Default 2: one tenant's slow check does not hold another's. */
  readonly size?: number;
  /** Longest one check or transpile may take, ms. Default 60 s (the largest script takes a few). */
  readonly timeoutMs?: number;
}

const DEFAULT_SIZE = 2;
const DEFAULT_TIMEOUT_MS = 60_000;

type Unnumbered<R> = R extends unknown ? Omit<R, "id"> : never;

/** A check (or transpile) that took longer than the pool's `timeoutMs`: its worker was ended. */
export class CheckTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`Checking the script took longer than ${timeoutMs / 1000} s and was stopped; make the script smaller or its types simpler.`);
    this.name = "CheckTimeoutError";
  }
}

interface Job {
  readonly request: Unnumbered<CheckerRequest>;
  readonly resolve: (value: CheckResult | CompiledScript) => void;
  readonly reject: (error: Error) => void;
}

class CheckerThread {
  readonly worker = new Worker(new URL("./checker-worker.js", import.meta.url), { execArgv: [] });
  busy: { readonly id: number; readonly job: Job; readonly timer: NodeJS.Timeout } | undefined;
}

export class CheckerPool implements ScriptCheck {
  readonly #size: number;
  readonly #timeoutMs: number;
  readonly #threads = new Set<CheckerThread>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: CheckerPoolOptions = {}) {
    this.#size = Math.max(1, options.size ?? DEFAULT_SIZE);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  check(source: string, declarations: ScriptDeclarations, options?: CheckOptions): Promise<CheckResult> {
    return this.#submit({ type: "check", source, declarations, ...(options === undefined ? {} : { options }) }) as Promise<CheckResult>;
  }

  compile(source: string): Promise<CompiledScript> {
    return this.#submit({ type: "compile", source }) as Promise<CompiledScript>;
  }

  /** Ends every worker; requests waiting or running reject. */
  async close(): Promise<void> {
    this.#closed = true;
    const closed = new Error("The script checker was closed.");
    for (const job of this.#queue.splice(0)) job.reject(closed);
    await Promise.all(
      [...this.#threads].map((thread) => {
        this.#finish(thread, closed);
        return thread.worker.terminate();
      }),
    );
    this.#threads.clear();
  }

  #submit(request: Unnumbered<CheckerRequest>): Promise<CheckResult | CompiledScript> {
    if (this.#closed) return Promise.reject(new Error("The script checker was closed."));
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const thread = this.#idle();
      if (thread === undefined) return;
      const job = this.#queue.shift()!;
      const id = this.#nextId++;
      const timer = setTimeout(() => this.#timedOut(thread), this.#timeoutMs);
      thread.busy = { id, job, timer };
      thread.worker.ref();
      thread.worker.postMessage({ ...job.request, id });
    }
  }

  #idle(): CheckerThread | undefined {
    for (const thread of this.#threads) if (thread.busy === undefined) return thread;
    if (this.#threads.size >= this.#size) return undefined;
    const thread = new CheckerThread();
    thread.worker.on("message", (reply: CheckerReply) => {
      if (thread.busy?.id !== reply.id) return;
      const { job } = thread.busy;
      this.#finish(thread, undefined);
      if (reply.ok) job.resolve(reply.value);
      else job.reject(new Error(`Checking the script failed: ${reply.message}`));
      this.#dispatch();
    });
    thread.worker.on("error", () => {});
    thread.worker.on("exit", () => {
      this.#threads.delete(thread);
      this.#finish(thread, new Error("The script checker's worker ended unexpectedly; check the script again."));
      if (!this.#closed) this.#dispatch();
    });
    thread.worker.unref();
    this.#threads.add(thread);
    return thread;
  }

  #timedOut(thread: CheckerThread): void {
    this.#finish(thread, new CheckTimeoutError(this.#timeoutMs));
    this.#threads.delete(thread);
    void thread.worker.terminate();
    this.#dispatch();
  }

  /** The thread's job, if any, is over (rejected with `error` if given); the thread is idle. */
  #finish(thread: CheckerThread, error: Error | undefined): void {
    const busy = thread.busy;
    thread.busy = undefined;
    if (busy === undefined) return;
    clearTimeout(busy.timer);
    if (error !== undefined) busy.job.reject(error);
    thread.worker.unref();
  }
}
