import { LEASES_GIVEN_UP_TOPIC } from "../store/lease-store.js";
import type { RunRecord, Store } from "../store/store.js";
import type { RunLeases } from "./run-leases.js";

/**
 * Takes over the runs that engines sharing the store left behind (DESIGN §10): several nodes
 * on one database are interchangeable, so a run does not wait for its node to come back.
 *
 * Invariants:
 * - Only runs whose holder is gone are taken: its lease lapsed (it stopped renewing), it gave
 *   its leases up at a clean stop (`GIVEN_UP_UNTIL`), or it ran on this host and its process is
 *   gone (`RunLeases.abandoned`). A live holder renews its lease on a path of its own, so a busy
 *   one keeps its runs; one that lost a run anyway stops at its next write (the lease epoch).
 * - A `running` run without a holder is taken once it was released (after a fault of its host,
 *   or a write the database gave up) at least `RETAKE_BACKOFF_SHARE` of a lease ago: never left
 *   without a holder, never taken at once (a run being created has no holder for a moment), and
 *   a poison pill is still bounded by its host faults (`host-faults.ts`).
 * - Taking over is claiming the lease, one atomic conditional update: of several engines
 *   scanning at once, one gets each run. A `running` run is then executed (its journal replays);
 *   a parked one is held here: the requests left for its old holder come here with it, and its
 *   timer is this engine's.
 * - Scans happen every third of a lease (wall-clock time, unref'd) and at once when another
 *   engine says it gave its leases up; one at a time, and told again meanwhile, once more after.
 */

/** Runs read per scan and status: bounds one read, not what is taken over (the next scan goes on). */
const SCAN_BATCH = 500;

/** A released run is taken again once a third of a lease passed since (one scan period). */
const RETAKE_BACKOFF_SHARE = 1 / 3;

/** What the takeover needs of the scheduler. */
export interface TakeoverHost {
  readonly store: Store;
  readonly leases: RunLeases;
  /** Executes a run left `running` (unless it executes here or a live process holds it). */
  resumeStopped(run: RunRecord): Promise<void>;
  /** A parked run is held here now: its timer is this engine's, and signals kept for it are looked for. */
  heldParked(run: RunRecord): Promise<void>;
  onError(error: unknown): void;
}

export class RunTakeover {
  #timer: NodeJS.Timeout | undefined;
  #stopHearing: (() => void) | undefined;
  #scanning = false;
  #again = false;
  #stopped = false;

  constructor(private readonly host: TakeoverHost) {}

  /** Scans now, then every third of a lease and whenever another engine gives its leases up, until `stop`. */
  start(): void {
    this.#stopHearing = this.host.store.notifier.subscribe(LEASES_GIVEN_UP_TOPIC, () => this.#tick());
    this.#timer = setInterval(() => this.#tick(), this.host.leases.leaseMs / 3);
    // Never keeps a process alive: the runs it holds do (`RunLeases`), or the server's socket.
    this.#timer.unref();
    this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#stopHearing?.();
  }

  #tick(): void {
    if (this.#stopped) return;
    if (this.#scanning) {
      this.#again = true;
      return;
    }
    this.#scanning = true;
    this.#scan()
      .catch((error: unknown) => this.host.onError(error))
      .finally(() => {
        this.#scanning = false;
        if (this.#again) {
          this.#again = false;
          this.#tick();
        }
      });
  }

  async #scan(): Promise<void> {
    const { store, leases } = this.host;
    const now = Date.now();
    // Running runs whose lease lapsed, and the latest others: their holder may be a process of this host known dead before then.
    const running = new Map<string, RunRecord>();
    for (const run of await store.listRuns({ status: ["running"], leaseLapsedBy: now, limit: SCAN_BATCH })) running.set(run.id, run);
    for (const run of await store.listRuns({ status: ["running"], limit: SCAN_BATCH })) running.set(run.id, run);
    // Released runs (no holder) are taken only from this list: one just created has no holder either.
    const released = await store.listRuns({ status: ["running"], releasedBefore: now - Math.round(leases.leaseMs * RETAKE_BACKOFF_SHARE), limit: SCAN_BATCH });
    for (const run of [...running.values(), ...released]) {
      if (this.#stopped) return;
      if (leases.abandoned(run) || released.includes(run)) await this.host.resumeStopped(run).catch((error: unknown) => this.host.onError(error));
    }
    for (const run of await store.listRuns({ status: ["waiting"], leaseLapsedBy: now, limit: SCAN_BATCH })) {
      if (this.#stopped) return;
      if (leases.abandoned(run) && (await leases.claim(run))) await this.host.heldParked(run).catch((error: unknown) => this.host.onError(error));
    }
  }
}
