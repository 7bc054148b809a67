import type { RunWait } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { QueueWatcher } from "../sources/tool-source.js";

/** A host tool's call shown as waiting for a worker. */
export type WorkerWait = RunWait & { readonly kind: "worker" };

/**
 * A run's host tool calls that no worker has taken, as `worker` waits of the run's record: what
 * `show`, `get_run` and the agent tools read to say "waiting for a worker to serve
 * `crm.lookup_customer` (no worker has polled for 312 s)".
 *
 * Invariants:
 * - A call is shown only once it has waited `noticeMs` untaken: most calls are taken within
 *   milliseconds, and none of those costs a write.
 * - A call stops being shown when a worker takes it or it has its outcome; each change to what is shown
 *   calls `changed` once (the executor writes the run's waits then).
 * - After `close`, nothing is shown and no timer is left.
 */
export class UnservedCalls {
  readonly #shown = new Map<number, WorkerWait>();
  readonly #timers = new Map<number, () => void>();

  constructor(
    private readonly clock: Clock,
    private readonly noticeMs: number,
    private readonly changed: () => void,
  ) {}

  /** What the attempts of call `seq` of `tool` report to. */
  watcher(seq: number, tool: string): QueueWatcher {
    return {
      waiting: (lastPollAt) => {
        this.done(seq);
        const since = this.clock.now();
        this.#timers.set(
          seq,
          this.clock.setTimer(since + this.noticeMs, () => {
            this.#timers.delete(seq);
            this.#shown.set(seq, { kind: "worker", seq, tool, since, lastPollAt });
            this.changed();
          }),
        );
      },
      taken: () => this.done(seq),
    };
  }

  /** Call `seq` was taken, has its outcome, or is no longer wanted. */
  done(seq: number): void {
    this.#timers.get(seq)?.();
    this.#timers.delete(seq);
    if (this.#shown.delete(seq)) this.changed();
  }

  /** The calls shown now, in seq order. */
  get waits(): readonly WorkerWait[] {
    return [...this.#shown.values()].sort((a, b) => a.seq - b.seq);
  }

  close(): void {
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
    this.#shown.clear();
  }
}
