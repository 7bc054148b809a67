import { StoreConflictError } from "./store-conflict-error.js";

/**
 * A write named a lease epoch the run no longer has: another process claimed the run since this
 * writer won its lease (this writer's lease lapsed, or it was thought dead). Nothing of the write
 * was done. The writer has lost the run: it stops executing it at once, writes nothing more for
 * it, does not release it (it is not its own), and counts no fault of the host (the new holder
 * goes on from the journal). A `StoreConflictError`, so code that treats conflicts as "someone
 * else got there first" keeps doing so.
 */
export class LeaseLostError extends StoreConflictError {
  override readonly code = "lease_lost";
  constructor(message: string) {
    super(message);
    this.name = "LeaseLostError";
  }
}

/** Whether `error` is a `LeaseLostError` (by its code: the store may be another copy of the package). */
export function isLeaseLost(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === "lease_lost";
}

/** The refusal of a write under a lease epoch the run no longer has. */
export function leaseLost(runId: string, epoch: number, current: number): LeaseLostError {
  return new LeaseLostError(
    `Run ${runId} was taken over by another process (lease epoch ${current}; this writer holds ${epoch}): nothing was written. This process stops executing it; the new holder goes on from its journal.`,
  );
}
