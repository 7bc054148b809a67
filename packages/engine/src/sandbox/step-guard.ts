import type { GuardedLimit } from "./limit-errors.js";

/**
 * The interrupt handler of one sandbox. QuickJS polls it while guest code runs; returning true
 * throws an error the guest cannot catch. Invariants:
 * - a step (start, or one delivery and the jobs it triggers) may run `cpuMs` before it is stopped;
 * - the WASM heap is shared by every sandbox of the worker and never shrinks, and
 *   `setMemoryLimit` does not see many small allocations: so the guard also stops the step that
 *   grows the heap past `heapLimitBytes`. Only growth during the step counts, so that the other
 *   sandboxes of a worker already past its limit (and retired) can still finish;
 * - once tripped, it interrupts everything until the next `begin()`: the host then runs only
 *   its own bookkeeping (`collect`) and never the script again.
 *
 * CPU is measured as wall time of the synchronous step (Node 20 has no per-thread CPU clock);
 * a step never waits on I/O, so on an idle core the two are the same.
 */
/** What the guard reads of a `WebAssembly.Memory` (Node's types do not declare WebAssembly). */
export interface WasmMemory {
  readonly buffer: { readonly byteLength: number };
}

export class StepGuard {
  private deadline = 0;
  private heapAtBegin = 0;
  private stopping = false;
  /** The first limit the script went past, if any. Sticky. */
  exceeded: GuardedLimit | undefined;

  constructor(
    private readonly cpuMs: number,
    private readonly heapLimitBytes: number,
    private readonly memory: WasmMemory,
  ) {}

  /** Starts a new budget: call before each step, and before the host's own calls into the guest. */
  begin(): void {
    this.deadline = performance.now() + this.cpuMs;
    this.heapAtBegin = this.memory.buffer.byteLength;
    this.stopping = false;
  }

  readonly shouldInterrupt = (): boolean => {
    if (this.stopping) return true;
    if (performance.now() > this.deadline) return this.trip("cpu");
    const heap = this.memory.buffer.byteLength;
    if (heap > this.heapLimitBytes && heap > this.heapAtBegin) return this.trip("heap");
    return false;
  };

  private trip(limit: GuardedLimit): true {
    this.exceeded ??= limit;
    this.stopping = true;
    return true;
  }
}
