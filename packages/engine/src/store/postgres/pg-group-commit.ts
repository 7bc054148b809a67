/**
 * Group commit on PostgreSQL: the writes submitted while the previous batch commits (or during
 * one event-loop turn, when none does) share one transaction on one connection, so concurrent
 * runs pay one commit (one WAL flush, one round trip for COMMIT) per batch instead of one each.
 *
 * Invariants:
 * - A write's promise settles only after the transaction holding it committed (resolve) or was
 *   abandoned (reject): resolved means acknowledged by PostgreSQL.
 * - Writes run in the order they were submitted; one batch commits at a time, so a write never
 *   overtakes one submitted before it (the appends to one run issued together land in order).
 * - A write that throws is undone alone and only its promise rejects: the batch's transaction
 *   is rolled back and the other writes run again without it (no SAVEPOINTs: they would cost two
 *   round trips per write, and a write rarely fails).
 * - A write is a function of the connection that may run more than once (above, and when the connection is
 *   lost before COMMIT was sent, nothing of the batch was written, and the whole batch runs again
 *   on a new connection, with backoff, for up to `reconnectMs`. Lost while COMMIT was in flight,
 *   the outcome is unknown: the batch's promises reject saying so (never run twice).
 * - A write PostgreSQL gives up because it crossed another transaction (a deadlock) runs again,
 *   a few times, before its promise rejects.
 */
import type pg from "pg";
import { StoreBusyError } from "../store-busy-error.js";
import { isConnectionError, isTransientConflict } from "./pg-connection.js";
import { backoffDelay, sleep } from "./pg-retry.js";

/** A write: statements on the batch's connection, inside its transaction. It may run again (see above): it keeps no state outside. */
export type PgWrite<T> = (tx: pg.ClientBase) => Promise<T>;

interface Pending {
  readonly write: PgWrite<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** A batch holds at most this many writes: one transaction stays short even under a burst. */
const MAX_BATCH = 256;

/** How often a write crossed by another transaction runs again before it fails. */
const CONFLICT_ATTEMPTS = 4;

export interface PgGroupCommitOptions {
  /** How long a batch keeps trying to reach the database after its connection was lost, ms. */
  readonly reconnectMs: number;
  /** Told of each lost connection a batch survives by trying again (for `/health` and logs). */
  readonly onRetry?: (error: unknown, attempt: number) => void;
}

export class PgGroupCommit {
  readonly #pool: pg.Pool;
  readonly #options: PgGroupCommitOptions;
  readonly #queue: Pending[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  #draining: Promise<void> | undefined;

  constructor(pool: pg.Pool, options: PgGroupCommitOptions) {
    this.#pool = pool;
    this.#options = options;
  }

  /** Queues `write` for the next batch; resolves with what it returned once that batch commits. */
  submit<T>(write: PgWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      // setImmediate: everything the runs queue while reacting to one turn's events lands in the same batch.
      if (this.#draining === undefined) this.#scheduled ??= setImmediate(() => void this.#drain());
    });
  }

  /** Resolves once every write submitted so far has settled. */
  async flush(): Promise<void> {
    if (this.#scheduled !== undefined) {
      clearImmediate(this.#scheduled);
      this.#scheduled = undefined;
      void this.#drain();
    }
    while (this.#draining !== undefined) await this.#draining;
  }

  #drain(): Promise<void> {
    this.#scheduled = undefined;
    this.#draining ??= (async () => {
      try {
        // While a batch commits, the next one gathers: the queue is taken again at once.
        while (this.#queue.length > 0) await this.#commit(this.#queue.splice(0, MAX_BATCH));
      } finally {
        this.#draining = undefined;
      }
    })();
    return this.#draining;
  }

  async #commit(batch: readonly Pending[]): Promise<void> {
    const deadline = Date.now() + this.#options.reconnectMs;
    for (let attempt = 1; ; attempt++) {
      const result = await this.#tryCommit(batch);
      if (result.kind === "done") {
        batch.forEach((pending, i) => {
          const outcome = result.outcomes[i]!;
          if (outcome.ok) pending.resolve(outcome.value);
          else pending.reject(outcome.error);
        });
        return;
      }
      if (result.kind === "retry" && Date.now() < deadline) {
        this.#options.onRetry?.(result.error, attempt);
        await sleep(Math.min(backoffDelay(attempt), Math.max(0, deadline - Date.now())));
        continue;
      }
      const error = result.kind === "retry" ? lostError(result.error, this.#options.reconnectMs) : result.error;
      for (const pending of batch) pending.reject(error);
      return;
    }
  }

  async #tryCommit(
    batch: readonly Pending[],
  ): Promise<{ kind: "done"; outcomes: Outcome[] } | { kind: "retry"; error: unknown } | { kind: "failed"; error: unknown }> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      return isConnectionError(error) ? { kind: "retry", error } : { kind: "failed", error };
    }
    let committing = false;
    try {
      const outcomes: (Outcome | undefined)[] = batch.map(() => undefined);
      let crossed = 0;
      for (;;) {
        // The writes not yet known to fail, in order, in one transaction, without SAVEPOINTs
        // (each would cost two round trips): when one throws, the transaction is rolled back, it
        // alone is failed, and the others run again. A failure costs a rerun; success costs nothing.
        await client.query("BEGIN");
        const values: unknown[] = [];
        let failed: { readonly index: number; readonly error: unknown } | undefined;
        for (let i = 0; i < batch.length && failed === undefined; i++) {
          if (outcomes[i] !== undefined) continue;
          try {
            values[i] = await batch[i]!.write(client);
          } catch (error) {
            if (isConnectionError(error)) throw error;
            failed = { index: i, error };
          }
        }
        if (failed === undefined) {
          committing = true;
          await client.query("COMMIT");
          client.release();
          return { kind: "done", outcomes: outcomes.map((outcome, i) => outcome ?? { ok: true, value: values[i] }) };
        }
        await client.query("ROLLBACK");
        // Crossed by another transaction (a deadlock): the same writes run again, a few times.
        if (isTransientConflict(failed.error) && ++crossed < CONFLICT_ATTEMPTS) continue;
        outcomes[failed.index] = { ok: false, error: isTransientConflict(failed.error) ? busyError(failed.error) : failed.error };
        if (outcomes.every((outcome) => outcome !== undefined)) {
          client.release();
          return { kind: "done", outcomes: outcomes.flatMap((outcome) => (outcome === undefined ? [] : [outcome])) };
        }
      }
    } catch (error) {
      // The connection is broken or in an unknown state: the pool must not hand it out again.
      client.release(error instanceof Error ? error : new Error(String(error)));
      if (!isConnectionError(error)) return { kind: "failed", error };
      if (committing) return { kind: "failed", error: unknownOutcomeError(error) };
      return { kind: "retry", error };
    }
  }
}

function busyError(cause: unknown): StoreBusyError {
  return new StoreBusyError(
    `PostgreSQL gave this write up ${CONFLICT_ATTEMPTS} times because it crossed other transactions (${cause instanceof Error ? cause.message : String(cause)}); nothing of it was written. Try it again.`,
    { cause },
  );
}

function lostError(cause: unknown, reconnectMs: number): Error {
  return new Error(
    `The PostgreSQL store could not reach its database for ${Math.round(reconnectMs / 1000)} s (${cause instanceof Error ? cause.message : String(cause)}); nothing of this write was committed. Check that the database is up and reachable, then try again.`,
    { cause },
  );
}

function unknownOutcomeError(cause: unknown): Error {
  return new Error(
    `The connection to PostgreSQL was lost while it committed this write (${cause instanceof Error ? cause.message : String(cause)}): whether it was committed is unknown. Read the data back before trying again.`,
    { cause },
  );
}
