/**
 * Probation (`host-faults.ts`): a run that a process died under and that was interrupted again
 * before it got back to waiting for answers is executed alone among such runs, one at a time.
 *
 * Why: a crash is counted against every run that was `running` in the dead process, at the claim
 * that takes it over; three in a row without getting back to waiting fail the run as a poison
 * pill. A node killed while it still replays many runs (a soak's kills a few calls apart, a
 * deployment restarting twice) would otherwise count its death against all of them, and fail
 * them all at the third. A run waiting for its turn here is not claimed, so a death then is not
 * counted against it; the one executing is the only suspect of this engine's making, which is
 * what tells a poison pill from a node killed under many runs.
 *
 * Invariants: at most one run on probation executes at a time in an engine; each run is queued
 * once; the turn passes when the run executing gets back to waiting for answers (its crashes are
 * forgiven), or its execution ends however it ends, or its turn finds it no longer to execute.
 */
export class Probation {
  #current: string | undefined;
  /** Runs waiting for their turn, in the order they came, each with what starts it. */
  readonly #queue = new Map<string, () => void>();

  /** Whether a run with these host faults is to execute on probation: it was interrupted by a crash, and again before it was forgiven. */
  static needs(faults: { readonly count: number; readonly crashes: number } | undefined): boolean {
    return faults !== undefined && faults.crashes > 0 && faults.count > 0;
  }

  /** Whether `runId` has the turn. */
  has(runId: string): boolean {
    return this.#current === runId;
  }

  /** `begin` is called when `runId`'s turn comes: now when nobody has it, else after those queued before. */
  enter(runId: string, begin: () => void): void {
    if (this.#current === runId || this.#queue.has(runId)) return;
    if (this.#current !== undefined) {
      this.#queue.set(runId, begin);
      return;
    }
    this.#current = runId;
    begin();
  }

  /** `runId`'s turn is over (or it gave it up): the next run queued has it. */
  leave(runId: string): void {
    if (this.#current !== runId) {
      this.#queue.delete(runId);
      return;
    }
    this.#current = undefined;
    const next = this.#queue.entries().next();
    if (next.done === true) return;
    const [id, begin] = next.value;
    this.#queue.delete(id);
    this.#current = id;
    begin();
  }

  /** The engine closes: nobody's turn comes (the runs queued stay `running`, for the next engine). */
  clear(): void {
    this.#queue.clear();
    this.#current = undefined;
  }
}
