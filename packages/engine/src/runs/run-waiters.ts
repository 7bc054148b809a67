import type { RunEnd } from "@tapedeck/protocol";
import type { ExecutionResult } from "./run-executor.js";

interface Waiter<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

function waiter<T>(): Waiter<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A waiter nobody awaits must not crash the process when the engine closes under it.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * Who waits on runs of this engine: for their end (across parks: a parked run woken here goes
 * on), or for the next time they end or park. Held only while someone waits.
 */
export class RunWaiters {
  readonly #ends = new Map<string, Waiter<RunEnd>>();
  readonly #settles = new Map<string, Waiter<ExecutionResult>>();

  /** Resolves when the run ends. */
  end(runId: string): Promise<RunEnd> {
    let w = this.#ends.get(runId);
    if (!w) this.#ends.set(runId, (w = waiter()));
    return w.promise;
  }

  /** Resolves when the run next ends or parks. */
  settled(runId: string): Promise<ExecutionResult> {
    let w = this.#settles.get(runId);
    if (!w) this.#settles.set(runId, (w = waiter()));
    return w.promise;
  }

  /** An execution of the run stopped: it ended or parked. */
  report(runId: string, result: ExecutionResult): void {
    this.#settles.get(runId)?.resolve(result);
    this.#settles.delete(runId);
    if (result.status === "waiting") return;
    this.#ends.get(runId)?.resolve(result);
    this.#ends.delete(runId);
  }

  /** The run stopped without an end (the engine closed or failed under it). */
  fail(runId: string, error: unknown): void {
    for (const map of [this.#ends, this.#settles]) {
      map.get(runId)?.reject(error);
      map.delete(runId);
    }
  }

  /** Every waiter fails with `error` (the engine closes). */
  failAll(error: unknown): void {
    for (const runId of new Set([...this.#ends.keys(), ...this.#settles.keys()])) this.fail(runId, error);
  }
}
