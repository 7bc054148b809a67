import { guardedLimitError } from "./limit-errors.js";
import { SandboxStoppedError, type Delivery, type ReplayStep, type Sandbox, type SandboxLimits, type Step } from "./sandbox.js";
import { StuckRequestError, type WorkerClient } from "./worker-client.js";

/**
 * The main thread's handle on one sandbox living in a worker: every method is one request.
 * Invariants:
 * - after the script has ended, deliveries are answered here, empty, without a round trip:
 *   late results of abandoned calls never reach the worker, even after `dispose`;
 * - once the worker is gone, every call rejects with its `SandboxLostError` (`dispose` resolves),
 *   except the call the watchdog stopped, which rejects with `SandboxStoppedError` and the
 *   script's CPU limit error;
 * - `release` runs exactly once, on the first `dispose`;
 * - a sandbox made by `run` (`freedAtEnd`) was freed by the worker with the step that ended its
 *   script: its `dispose` then sends nothing.
 */
export class QuickJsSandbox implements Sandbox {
  private ended = false;
  private disposed = false;
  private started: boolean;

  constructor(
    private readonly client: WorkerClient,
    private readonly sandboxId: number,
    private readonly limits: SandboxLimits,
    private readonly release: () => void,
    private readonly freedAtEnd = false,
  ) {
    this.started = freedAtEnd;
  }

  async start(): Promise<Step> {
    this.expectOpen();
    if (this.started) throw new Error(`Sandbox of ${this.sandboxId}: start() was already called.`);
    this.started = true;
    return this.track(await this.stoppable(this.client.request({ type: "start", sandboxId: this.sandboxId })));
  }

  /** The first step of a sandbox made by `run` (already started). */
  first(step: Step): Step {
    return this.track(step);
  }

  async deliverEach(deliveries: readonly Delivery[]): Promise<Step[]> {
    if (this.ended) return [];
    this.expectOpen();
    const steps = await this.stoppable(this.client.request({ type: "deliverEach", sandboxId: this.sandboxId, deliveries }));
    for (const step of steps) this.track(step);
    return steps;
  }

  async replay(deliveries: readonly Delivery[]): Promise<ReplayStep> {
    if (this.ended) return { calls: [], logs: [], delivered: 0 };
    this.expectOpen();
    return this.track(await this.stoppable(this.client.request({ type: "replay", sandboxId: this.sandboxId, deliveries })));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    try {
      const freed = this.freedAtEnd && this.ended;
      if (this.client.lost === undefined && !freed) await this.client.request({ type: "dispose", sandboxId: this.sandboxId });
    } catch (error) {
      // A worker lost while disposing has freed everything anyway.
      if (this.client.lost === undefined) throw error;
    } finally {
      this.release();
    }
  }

  /** The request, with the watchdog's stop turned into the script's limit error. */
  private async stoppable<T>(request: Promise<T>): Promise<T> {
    try {
      return await request;
    } catch (error) {
      if (!(error instanceof StuckRequestError)) throw error;
      this.ended = true;
      throw new SandboxStoppedError(guardedLimitError("stuck", this.limits));
    }
  }

  private expectOpen(): void {
    if (this.disposed) throw new Error("This sandbox was disposed.");
    if (this.client.lost !== undefined) throw this.client.lost;
  }

  private track<S extends Step>(step: S): S {
    if (step.end !== undefined) this.ended = true;
    return step;
  }
}
