/**
 * What a sandbox worker tells the main thread about the request it is running, through shared
 * memory, so the main thread can see a worker stuck where the interrupt handler never runs (a
 * loop inside a C built-in of QuickJS, such as `Array.prototype.join` over 2^32−1 holes) without
 * any help from the stuck thread. Invariants:
 * - the worker writes, the main thread only reads;
 * - `deadline` is 0 while the worker runs no request; otherwise it is when the current budget
 *   ends (wall-clock ms since the epoch): set when a request starts, and moved each time the
 *   sandbox starts a new CPU budget (each step, each replayed delivery);
 * - `request` is the id of the request running (written before `deadline`).
 */

/** Wall-clock ms since the epoch, the same in every thread (`Date` is replaced in sandbox workers). */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

const DEADLINE = 0;
const REQUEST = 1;

/** The shared state of one worker: two 64-bit slots. */
export class WorkerWatch {
  private readonly slots: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.slots = new BigInt64Array(buffer);
  }

  /** Worker: request `id` starts, with a budget until `deadline`. */
  begin(id: number, deadline: number): void {
    Atomics.store(this.slots, REQUEST, BigInt(id));
    this.extend(deadline);
  }

  /** Worker: the current request has a new budget, until `deadline`. */
  extend(deadline: number): void {
    Atomics.store(this.slots, DEADLINE, BigInt(Math.ceil(deadline)));
  }

  /** Worker: no request is running. */
  idle(): void {
    Atomics.store(this.slots, DEADLINE, 0n);
  }

  /** Main thread: the request running and when its budget ends, or undefined when idle. */
  read(): { readonly request: number; readonly deadline: number } | undefined {
    const deadline = Number(Atomics.load(this.slots, DEADLINE));
    if (deadline === 0) return undefined;
    return { request: Number(Atomics.load(this.slots, REQUEST)), deadline };
  }
}
