import type { GuardedLimit } from "./limit-errors.js";
import type { SandboxHeap } from "./sandbox-heap.js";
import { wallNow } from "./worker-watch.js";

/**
 * The limits of one sandbox, as the host sees them: what decides that a script went past a
 * limit is always this guard's own knowledge, never the name or message of an error the script
 * could have made itself. Invariants:
 * - a step (start, or one delivery and the jobs it triggers) may run `cpuMs` before the
 *   interrupt handler stops it (QuickJS polls the handler while guest code runs; returning true
 *   throws an error the guest cannot catch);
 * - the sandbox's heap refuses to grow past its limit (see `sandbox-heap.ts`): the refusal trips
 *   the guard at once, so the script is stopped at the next poll, whatever it catches;
 * - once tripped, it interrupts everything until the next `begin()`: the host then runs only
 *   its own bookkeeping (`collect`) and never the script again;
 * - every `begin()` is announced to `onBudget` (the worker's watch, which the main thread reads
 *   to stop a step the interrupt handler cannot reach: see `worker-watch.ts`).
 *
 * - with `fuel`, the script is stopped at the poll after its fuel is spent, whatever the clock
 *   says: that point is the same on every run of the same script with the same deliveries.
 *
 * CPU is measured as wall time of the synchronous step (Node 20 has no per-thread CPU clock);
 * a step never waits on I/O, so on an idle core the two are the same.
 */
export class StepGuard {
  private deadline = 0;
  /** Interrupt polls left (`SandboxLimits.fuel`), counted over the sandbox's life: never reset by `begin()`. */
  private fuelLeft: number;
  private stopping = false;
  /** The first limit the script went past, if any. Sticky. */
  exceeded: GuardedLimit | undefined;

  constructor(
    private readonly cpuMs: number,
    heap: SandboxHeap,
    private readonly onBudget: (deadline: number) => void,
    fuel = Infinity,
  ) {
    heap.onRefused = () => this.trip("memory");
    this.fuelLeft = fuel;
  }

  /** Starts a new budget: call before each step, and before the host's own calls into the guest. */
  begin(): void {
    this.deadline = performance.now() + this.cpuMs;
    this.stopping = false;
    this.onBudget(wallNow() + this.cpuMs);
  }

  readonly shouldInterrupt = (): boolean => {
    if (this.stopping) return true;
    // Counted before the clock is read, so the point where fuel runs out depends only on the script.
    if (--this.fuelLeft < 0) return this.trip("fuel");
    if (performance.now() > this.deadline) return this.trip("cpu");
    return false;
  };

  private trip(limit: GuardedLimit): true {
    this.exceeded ??= limit;
    this.stopping = true;
    return true;
  }
}
