import { Worker } from "node:worker_threads";
import type { ConversionOutcome, ConversionRequest, HtmlConverter } from "./html-converter.js";

/**
 * web.fetch's pages converted on worker threads: a page of a few MiB costs seconds of parsing
 * and conversion, and on the engine's own event loop it held every other run and `/health`
 * meanwhile (9.5 s for one deep page).
 *
 * Invariants:
 * - At most `size` threads, started when needed and ended after `idleMs` without work (a
 *   thread that converted a large page holds its heap until then); a conversion goes to an idle
 *   thread, else waits for one, in arrival order. Idle threads never keep the process alive.
 * - Each conversion is bounded: `deadlineMs` of wall time (from when its thread has loaded
 *   its modules: a thread's start is not the page's cost), and its thread's heap by
 *   `resourceLimits` (`heapMb`). Past either, the thread is ended (the next conversion gets a
 *   new one) and the outcome is `stopped`, naming the bound. A thread that dies for any other
 *   reason answers `stopped` too, and is replaced. An aborted signal ends the conversion's thread.
 * - `convert` never rejects.
 */

export interface HtmlConversionPoolOptions {
  /** Threads at most. Default 2: one tenant's heavy page does not hold another's. */
  readonly size?: number;
  /** Longest one conversion may take, ms. Default `CONVERSION_DEADLINE_MS`. */
  readonly deadlineMs?: number;
  /** A thread's heap (V8's old generation), MiB. Default `CONVERSION_HEAP_MB`. */
  readonly heapMb?: number;
  /** A thread without work for this long ends, ms. Default 30 s. */
  readonly idleMs?: number;
}

/**
 * A 5 MiB page (the `http` tool's bound) of small elements, cut to 100,000 elements, converts in
 * about 3 s on an idle core; the deadline leaves room for a loaded machine, and stops a page
 * built to take minutes.
 */
export const CONVERSION_DEADLINE_MS = 20_000;

/** Heap for one conversion: that 5 MiB page peaks at about 150 MiB (measured); room for twice that. */
export const CONVERSION_HEAP_MB = 320;

const DEFAULT_SIZE = 2;
const DEFAULT_IDLE_MS = 30_000;

/** What a worker answers: the outcome, or the exception the conversion threw; `ready` once, when it has loaded. */
export type ConversionReply =
  | { readonly id: number; readonly outcome: ConversionOutcome }
  | { readonly id: number; readonly error: string; readonly outcome?: undefined }
  | { readonly ready: true; readonly id?: undefined };

interface Job {
  readonly request: ConversionRequest;
  readonly signal: AbortSignal;
  readonly resolve: (outcome: ConversionOutcome) => void;
}

interface Busy {
  readonly id: number;
  readonly job: Job;
  /** The deadline's timer, set once the thread is ready. */
  timer: NodeJS.Timeout | undefined;
  readonly onAbort: () => void;
}

class ConversionThread {
  readonly worker: Worker;
  busy: Busy | undefined;
  idle: NodeJS.Timeout | undefined;
  /** It has loaded its modules (its first message). */
  ready = false;

  constructor(heapMb: number) {
    this.worker = new Worker(new URL("./html-conversion-worker.js", import.meta.url), {
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(64, heapMb / 4) },
    });
  }
}

export class HtmlConversionPool implements HtmlConverter {
  readonly #size: number;
  readonly #deadlineMs: number;
  readonly #heapMb: number;
  readonly #idleMs: number;
  readonly #threads = new Set<ConversionThread>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: HtmlConversionPoolOptions = {}) {
    this.#size = Math.max(1, options.size ?? DEFAULT_SIZE);
    this.#deadlineMs = options.deadlineMs ?? CONVERSION_DEADLINE_MS;
    this.#heapMb = options.heapMb ?? CONVERSION_HEAP_MB;
    this.#idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  }

  convert(request: ConversionRequest, signal: AbortSignal): Promise<ConversionOutcome> {
    if (this.#closed) return Promise.resolve(stopped("failed", "The page could not be converted: the engine is closing."));
    if (signal.aborted) return Promise.resolve(aborted());
    return new Promise((resolve) => {
      this.#queue.push({ request, signal, resolve });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.resolve(stopped("failed", "The page could not be converted: the engine is closing."));
    const threads = [...this.#threads];
    this.#threads.clear();
    await Promise.all(
      threads.map((thread) => {
        this.#finish(thread, stopped("failed", "The page could not be converted: the engine is closing."));
        clearTimeout(thread.idle);
        return thread.worker.terminate();
      }),
    );
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const job = this.#queue.shift()!;
      if (job.signal.aborted) {
        job.resolve(aborted());
        continue;
      }
      const thread = this.#idleThread();
      if (thread === undefined) {
        this.#queue.unshift(job);
        return;
      }
      const id = this.#nextId++;
      const onAbort = () => this.#end(thread, aborted());
      job.signal.addEventListener("abort", onAbort, { once: true });
      clearTimeout(thread.idle);
      thread.busy = { id, job, timer: undefined, onAbort };
      if (thread.ready) this.#startDeadline(thread);
      thread.worker.ref();
      thread.worker.postMessage({ id, request: job.request });
    }
  }

  #idleThread(): ConversionThread | undefined {
    for (const thread of this.#threads) if (thread.busy === undefined) return thread;
    if (this.#threads.size >= this.#size) return undefined;
    const thread = new ConversionThread(this.#heapMb);
    thread.worker.on("message", (reply: ConversionReply) => {
      if (reply.id === undefined) {
        thread.ready = true;
        if (thread.busy !== undefined) this.#startDeadline(thread);
        return;
      }
      if (thread.busy?.id !== reply.id) return;
      this.#finish(thread, reply.outcome ?? stopped("failed", `The page could not be converted (${reply.error}); try format "html", or a selector.`));
      this.#dispatch();
    });
    thread.worker.on("error", (error: Error & { code?: string }) => {
      // The thread is gone after an error: say why to its conversion before `exit` does.
      this.#finish(
        thread,
        error.code === "ERR_WORKER_OUT_OF_MEMORY" ? this.#overMemory() : stopped("failed", `The page could not be converted (${error.message}).`),
      );
    });
    thread.worker.on("exit", () => {
      this.#threads.delete(thread);
      clearTimeout(thread.idle);
      this.#finish(thread, stopped("failed", "The page could not be converted: its conversion thread ended."));
      if (!this.#closed) this.#dispatch();
    });
    thread.worker.unref();
    this.#threads.add(thread);
    return thread;
  }

  #startDeadline(thread: ConversionThread): void {
    thread.busy!.timer = setTimeout(() => this.#end(thread, this.#overDeadline()), this.#deadlineMs);
  }

  /** Ends `thread` (its conversion answers `outcome`); the next conversion gets a new one. */
  #end(thread: ConversionThread, outcome: ConversionOutcome): void {
    this.#finish(thread, outcome);
    this.#threads.delete(thread);
    clearTimeout(thread.idle);
    void thread.worker.terminate();
    this.#dispatch();
  }

  /** `thread`'s conversion, if any, answers `outcome`; the thread is idle, and ends after `idleMs` unless given work. */
  #finish(thread: ConversionThread, outcome: ConversionOutcome): void {
    const busy = thread.busy;
    if (busy === undefined) return;
    thread.busy = undefined;
    clearTimeout(busy.timer);
    busy.job.signal.removeEventListener("abort", busy.onAbort);
    busy.job.resolve(outcome);
    thread.worker.unref();
    if (this.#threads.has(thread)) thread.idle = setTimeout(() => this.#end(thread, aborted()), this.#idleMs).unref();
  }

  #overDeadline(): ConversionOutcome {
    return stopped(
      "deadline",
      `Converting the page to Markdown took longer than ${this.#deadlineMs / 1000} s (web.fetch's bound per page) and was stopped. ` +
        'Ask for format "html" and read it in parts (offset), or fetch a smaller page.',
    );
  }

  #overMemory(): ConversionOutcome {
    return stopped(
      "memory",
      `Converting the page to Markdown needed more than ${this.#heapMb} MiB (web.fetch's memory bound per page) and was stopped. ` +
        'Ask for format "html" and read it in parts (offset), or fetch a smaller page.',
    );
  }
}

function stopped(limit: "deadline" | "memory" | "failed" | "aborted", message: string): ConversionOutcome {
  return { kind: "stopped", limit, message };
}

function aborted(): ConversionOutcome {
  return stopped("aborted", "The conversion was stopped: the call no longer waits for it.");
}
