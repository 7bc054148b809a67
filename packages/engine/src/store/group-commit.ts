/**
 * Group commit: the writes submitted during one event-loop turn share one SQLite transaction.
 *
 * Why: with `synchronous=FULL` every commit waits for a disk flush (300–600 µs here), so one
 * commit per append caps a store at ~2.6 k appends/s. Runs append concurrently; committing
 * their appends together pays the flush once per turn instead of once per append.
 *
 * Invariants:
 * - A write's promise settles only after the transaction holding it has committed (resolve) or
 *   has been abandoned (reject): resolved means durable.
 * - Writes run in the order they were submitted, each in its own SAVEPOINT: a write that throws
 *   is undone alone and only its promise rejects; the others of the batch still commit. A batch
 *   of one write (a sequential run) needs no SAVEPOINT: if it throws, the transaction is undone.
 * - If the commit itself fails, nothing of the batch is written and every promise rejects.
 * - At most one flush is scheduled at a time; `flush()` commits what is queued synchronously.
 */
import type BetterSqlite3 from "better-sqlite3";

interface Pending {
  readonly write: () => void;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

const COMMITTED: Outcome = { ok: true };

export class GroupCommit {
  readonly #queue: Pending[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  readonly #member: (write: () => void) => void;
  readonly #batch: BetterSqlite3.Transaction<(batch: readonly Pending[]) => Outcome[]>;

  constructor(db: BetterSqlite3.Database) {
    // better-sqlite3 runs a transaction function called inside another as a SAVEPOINT.
    this.#member = db.transaction((write: () => void) => write());
    this.#batch = db.transaction((batch: readonly Pending[]) => {
      // A lone write needs no SAVEPOINT: if it throws, undoing the transaction undoes it alone.
      if (batch.length === 1) {
        batch[0]?.write();
        return [COMMITTED];
      }
      return batch.map((pending) => this.#attempt(pending));
    });
  }

  /** Queues `write` (synchronous SQL) for the next batch; resolves once that batch commits. */
  submit(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      // setImmediate runs after the I/O callbacks and microtasks of this turn: everything the
      // runs queue while reacting to one turn's events lands in the same batch.
      this.#scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Commits everything queued now, synchronously, then settles its promises. */
  flush(): void {
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    const batch = this.#queue.splice(0);
    if (batch.length === 0) return;
    let outcomes: Outcome[];
    try {
      // IMMEDIATE takes the write lock up front: another process cannot make us fail halfway.
      outcomes = this.#batch.immediate(batch);
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok === false) pending.reject(outcome.error);
      else pending.resolve();
    });
  }

  #attempt(pending: Pending): Outcome {
    try {
      this.#member(pending.write);
      return COMMITTED;
    } catch (error) {
      return { ok: false, error };
    }
  }
}
