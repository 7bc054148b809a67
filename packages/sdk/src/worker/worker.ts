import { toolFailure, type JsonValue, type ToolFailure } from "@tapedeck/protocol";
import type { HostTask, LeaseStatus } from "@tapedeck/protocol/api";
import { TapedeckError } from "../errors.js";
import type { Tasks } from "../resources/tasks.js";
import { failureOf } from "./failure-of.js";
import { heartbeatFailed, pollFailed, pollFailedOnNode, printProblem, resultRefused, resultUndelivered, type WorkerProblem } from "./worker-problem.js";
import { toJsonResult, type ToolContext, type ToolHandler, type WorkerHandle, type WorkerOptions } from "./worker-types.js";

/** Heartbeats go out this many times per `heartbeatTimeoutMs`: two can be lost before the lease lapses. */
const HEARTBEATS_PER_TIMEOUT = 3;
const DEFAULT_CONCURRENCY = 4;
const DEFAULT_POLL_WAIT_MS = 30_000;
/** Pauses after a failed poll: from 1 s, doubling, at most 30 s (a server restart takes seconds). */
const BACKOFF = { firstMs: 1_000, maxMs: 30_000 } as const;
/** With several nodes, a pause comes only after every node failed, and stays short: one node being down must not idle the worker. */
const SEVERAL_NODES_MAX_PAUSE_MS = 5_000;

type Answer = { readonly kind: "result"; readonly value: JsonValue } | { readonly kind: "failure"; readonly failure: ToolFailure };

/**
 * Serves host tools from this process: long-polls the server for their calls, runs each with a
 * context (idempotency key, abort signal, heartbeat), heartbeats while it runs, and answers.
 *
 * Invariants:
 * - At most `concurrency` tools run at once; a poll asks for no more tasks than there are free slots.
 * - Every running task heartbeats every `heartbeatTimeoutMs / 3` until its tool settles.
 * - A task whose lease ended (`cancelled`, `lost`) is not answered: the server drops the answer.
 * - Every problem it gets over (a failed poll, a failed heartbeat) and every answer it drops is
 *   reported once, as one line for a log (`WorkerProblem`), never as a stack trace.
 */
export class Worker {
  /** One per node the worker may poll (the client's first); `#current` is the one polled now. */
  readonly #nodes: readonly Tasks[];
  #current = 0;
  readonly #options: WorkerOptions;
  /** The worker's tools by `group.name`: a task names one, and only the functions given serve it (never an inherited `constructor`). */
  readonly #handlers: ReadonlyMap<string, ToolHandler>;
  readonly #tools: readonly string[];
  readonly #stopping = new AbortController();
  readonly #running = new Map<string, AbortController>();
  #slotFreed: (() => void) | undefined;
  #started = false;

  constructor(tasks: Tasks | readonly Tasks[], options: WorkerOptions) {
    this.#nodes = Array.isArray(tasks) ? tasks : [tasks as Tasks];
    this.#options = options;
    this.#handlers = new Map(
      Object.entries(options.tools ?? {}).flatMap(([group, tools]) =>
        Object.entries(tools).flatMap(([name, fn]) => (typeof fn === "function" ? [[`${group}.${name}`, fn] as const] : [])),
      ),
    );
    this.#tools = [...this.#handlers.keys()];
    if (this.#tools.length === 0) throw new TypeError("worker: `tools` must hold at least one function: { <group>: { <name>: async (args, ctx) => result } }.");
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new TypeError(`worker: concurrency must be a positive integer, not ${String(options.concurrency)}.`);
  }

  /** Starts polling. A worker starts once. */
  start(): WorkerHandle {
    if (this.#started) throw new Error("worker: this worker was started already; make a new one with tapedeck.worker().");
    this.#started = true;
    const stopped = this.#loop();
    // `stopped` is the caller's to await; a rejection nobody awaits must not crash the process.
    stopped.catch(() => {});
    return {
      stopped,
      stop: async () => {
        this.#stop();
        await stopped.catch(() => {});
      },
    };
  }

  #stop(): void {
    if (this.#stopping.signal.aborted) return;
    this.#stopping.abort(new Error("The worker is stopping."));
    for (const controller of this.#running.values()) controller.abort(new Error("The worker is stopping."));
    this.#slotFreed?.();
  }

  async #loop(): Promise<void> {
    const concurrency = this.#options.concurrency ?? DEFAULT_CONCURRENCY;
    const settled = new Set<Promise<void>>();
    let pause = 0;
    let failedInARow = 0;
    const maxPause = this.#nodes.length > 1 ? SEVERAL_NODES_MAX_PAUSE_MS : BACKOFF.maxMs;
    try {
      while (!this.#stopping.signal.aborted) {
        if (this.#running.size >= concurrency) {
          await new Promise<void>((resolve) => (this.#slotFreed = resolve));
          continue;
        }
        let tasks: readonly HostTask[];
        const node = this.#nodes[this.#current]!;
        try {
          ({ tasks } = await node.poll(
            {
              tools: this.#tools,
              waitMs: this.#options.pollWaitMs ?? DEFAULT_POLL_WAIT_MS,
              max: concurrency - this.#running.size,
              ...(this.#options.toolset ? { toolset: this.#options.toolset } : {}),
            },
            this.#stopping.signal,
          ));
          pause = 0;
          failedInARow = 0;
        } catch (error) {
          if (this.#stopping.signal.aborted) break;
          if (!recoverable(error)) throw error;
          // The next node at once; a pause only once every node failed in a row.
          this.#current = (this.#current + 1) % this.#nodes.length;
          if (++failedInARow < this.#nodes.length) {
            this.#report(error, pollFailedOnNode(error, this.#nodes.length));
            continue;
          }
          failedInARow = 0;
          pause = Math.min(pause === 0 ? BACKOFF.firstMs : pause * 2, maxPause);
          this.#report(error, pollFailed(error, pause));
          await delay(pause, this.#stopping.signal);
          continue;
        }
        for (const task of tasks) {
          const done = this.#serve(task, node).finally(() => settled.delete(done));
          settled.add(done);
        }
      }
    } finally {
      this.#stop();
      await Promise.all(settled);
    }
  }

  /** Runs one task to its answer. Never rejects: problems go to `onError`. */
  async #serve(task: HostTask, node: Tasks): Promise<void> {
    const controller = new AbortController();
    // A poll answered as the worker was being stopped: its tools start with the stop already said.
    if (this.#stopping.signal.aborted) controller.abort(this.#stopping.signal.reason);
    this.#running.set(task.id, controller);
    let leaseEnded = false;
    const heartbeat = async (): Promise<void> => {
      if (leaseEnded) return;
      const status = await node.heartbeat(task.id, task.lease);
      if (status !== "ok") {
        leaseEnded = true;
        controller.abort(new Error(leaseMessage(status)));
      }
    };
    const timer = setInterval(
      () => heartbeat().catch((error: unknown) => this.#report(error, heartbeatFailed(task, error))),
      Math.max(1, task.heartbeatTimeoutMs / HEARTBEATS_PER_TIMEOUT),
    );
    try {
      const answer = await this.#call(task, { ...contextOf(task), signal: controller.signal, heartbeat });
      clearInterval(timer);
      // The server drops an answer to an ended lease; after a stop, a failure is most likely the abort itself.
      if (leaseEnded || (answer.kind === "failure" && this.#stopping.signal.aborted)) return;
      let status: LeaseStatus;
      try {
        status =
          answer.kind === "result"
            ? await node.complete(task.id, { lease: task.lease, result: answer.value })
            : await node.fail(task.id, { lease: task.lease, error: answer.failure });
      } catch (error) {
        return this.#report(error, resultUndelivered(task, answer.kind, error));
      }
      if (status !== "ok") {
        controller.abort(new Error(leaseMessage(status)));
        this.#report(new Error(leaseMessage(status)), resultRefused(task, answer.kind, status));
      }
    } finally {
      clearInterval(timer);
      this.#running.delete(task.id);
      this.#slotFreed?.();
    }
  }

  async #call(task: HostTask, context: ToolContext): Promise<Answer> {
    const fn = this.#handlers.get(task.tool);
    if (fn === undefined) return { kind: "failure", failure: toolFailure("tool_error", `This worker has no implementation of ${task.tool}.`) };
    let value: unknown;
    try {
      value = await fn(task.args as never, context);
    } catch (error) {
      return { kind: "failure", failure: failureOf(error) };
    }
    try {
      return { kind: "result", value: toJsonResult(value) };
    } catch (error) {
      return {
        kind: "failure",
        failure: toolFailure(
          "tool_error",
          `${task.tool} returned a value JSON cannot hold (${error instanceof Error ? error.message : String(error)}); return plain data.`,
        ),
      };
    }
  }

  #report(error: unknown, problem: WorkerProblem): void {
    try {
      if (this.#options.onError) this.#options.onError(error, problem);
      else printProblem(problem);
    } catch {
      // A faulty error handler must not stop the worker.
    }
  }
}

function contextOf(task: HostTask): Omit<ToolContext, "signal" | "heartbeat"> {
  return { tool: task.tool, idempotencyKey: task.idempotencyKey, runId: task.runId, seq: task.seq, attempt: task.attempt, traceparent: task.traceparent };
}

function leaseMessage(status: Exclude<LeaseStatus, "ok">): string {
  return status === "cancelled"
    ? "The run no longer wants this call (it was cancelled, or the attempt timed out)."
    : "This worker lost the call's lease (a heartbeat came too late); the call may be sent to another worker.";
}

/** Worth polling again: the server unreachable, restarting, overloaded or failing. Anything else (a refused key, a bad request) would fail the same way again. */
function recoverable(error: unknown): boolean {
  if (!TapedeckError.is(error)) return false;
  return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
