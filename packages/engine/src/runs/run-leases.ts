/**
 * The leases an engine holds on runs, so that one process at a time executes (or keeps) a run,
 * and the requests other processes leave for the runs it holds.
 *
 * - An engine claims a run before executing it, and keeps the lease while it executes it and,
 *   if it wakes runs, while the run is parked; it renews every lease it holds in one statement.
 * - Another process that wants something of a run held elsewhere (a signal arrived, a decision,
 *   a cancel) writes a request, which tells the holder through the store's notifier
 *   (`runRequestsTopic`); the holder takes its requests then and applies them as if they had
 *   been made in its own process. (On one machine the notifier also calls it a few times a
 *   second, the poll this once was; PostgreSQL's wakes it at once.)
 * - A holder that dies stops renewing; its runs are taken over once the lease lapses, at once
 *   when the holder is known dead (same host, its pid gone), which is the common case with the
 *   embedded SQLite store. Who takes them over, and when, is `run-takeover.ts`.
 * - A holder that stops cleanly gives its leases up by lapsing them (`GIVEN_UP_UNTIL`: still
 *   naming it, so other engines find them and take them over at once, without a host fault)
 *   and says so (`LEASES_GIVEN_UP_TOPIC`).
 * - Lease times are wall-clock time, not the engine's clock: they are about processes, not runs.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { GIVEN_UP_UNTIL, LEASES_GIVEN_UP_TOPIC, runRequestsTopic } from "../store/lease-store.js";
import type { RunRecord, Store } from "../store/store.js";
import type { RunHost } from "./run-host.js";

/** How long a lease holds without renewal: long enough to ride out a stalled event loop (`EngineOptions.leaseMs`). */
export const LEASE_MS = 30_000;
/** Leases are renewed this many times per lease: two renewals may be lost (a stall, a lost connection) before it lapses. */
const RENEWALS_PER_LEASE = 3;

export class RunLeases {
  /** `<host>/<pid>/<random>`: a holder on this host can be checked for life by its pid. */
  readonly owner = `${hostname()}/${process.pid}/${randomBytes(6).toString("hex")}`;
  readonly #held = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #stopHearing: (() => void) | undefined;
  #polling = false;
  #again = false;
  #closed = false;
  /** Claims sent and not yet answered: `close` waits for them, so a lease won meanwhile is given up too. */
  readonly #claiming = new Set<Promise<boolean>>();

  private readonly store: Store;

  /**
   * `host` applies the requests other processes leave for the runs this engine holds, and hears
   * of faults; `leaseMs` is how long a lease holds without renewal.
   */
  constructor(
    private readonly host: RunHost,
    readonly leaseMs: number = LEASE_MS,
  ) {
    this.store = host.store;
  }

  /** Whether another live engine holds the run. */
  heldElsewhere(run: RunRecord): boolean {
    return run.owner !== undefined && run.owner.id !== this.owner && isAlive(run.owner, Date.now());
  }

  /** Whether another engine held the run and is gone (its lease lapsed or was given up, or its process on this host is gone): the run is to be taken over. */
  abandoned(run: RunRecord): boolean {
    return run.owner !== undefined && run.owner.id !== this.owner && !isAlive(run.owner, Date.now());
  }

  holds(runId: string): boolean {
    return this.#held.has(runId);
  }

  /** Takes the run's lease (or keeps it); false when another live engine holds it. */
  async claim(run: RunRecord): Promise<boolean> {
    if (this.#closed) return false;
    const now = Date.now();
    const dead = run.owner && run.owner.id !== this.owner && !isAlive(run.owner, now) ? run.owner.id : undefined;
    const claiming = this.store.claimRun(run.id, this.owner, now + this.leaseMs, now, dead);
    this.#claiming.add(claiming);
    try {
      const claimed = await claiming;
      if (claimed) this.#held.add(run.id);
      // Won while the engine closes: `close` gives it up with the others; no renewal starts.
      if (this.#closed) return false;
      if (claimed) this.#start();
      return claimed;
    } finally {
      this.#claiming.delete(claiming);
    }
  }

  async release(runId: string): Promise<void> {
    if (!this.#held.delete(runId)) return;
    if (this.#held.size === 0) this.#stop();
    await this.store.releaseRuns(this.owner, runId);
  }

  /** Gives up every lease (the engine closes): other engines take the runs over at once. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stop();
    await Promise.allSettled([...this.#claiming]);
    if (this.#held.size === 0) return;
    this.#held.clear();
    await this.store.renewLeases(this.owner, GIVEN_UP_UNTIL);
    this.store.notifier.publish(LEASES_GIVEN_UP_TOPIC);
  }

  #start(): void {
    // Not unref'd: an engine that holds a run (executing, or parked and kept) keeps its process up.
    this.#timer ??= setInterval(() => {
      if (!this.#closed) this.store.renewLeases(this.owner, Date.now() + this.leaseMs).catch((error: unknown) => this.host.onError(error));
    }, this.leaseMs / RENEWALS_PER_LEASE);
    this.#stopHearing ??= this.store.notifier.subscribe(runRequestsTopic(this.owner), () => this.#tick());
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopHearing?.();
    this.#stopHearing = undefined;
  }

  /** Takes the requests left for this engine's runs, once at a time; told again meanwhile, it looks again after. */
  #tick(): void {
    if (this.#closed) return;
    if (this.#polling) {
      this.#again = true;
      return;
    }
    this.#polling = true;
    this.#work()
      .catch((error: unknown) => this.host.onError(error))
      .finally(() => {
        this.#polling = false;
        if (this.#again) {
          this.#again = false;
          this.#tick();
        }
      });
  }

  async #work(): Promise<void> {
    for (const { runId, request } of await this.store.takeRunRequests(this.owner)) {
      if (this.#closed) return;
      await this.host.applyRequest(runId, request).catch((error: unknown) => this.host.onError(error));
    }
  }
}

/** A holder is alive while its lease holds; on this host, only while its process exists too. */
function isAlive(owner: { readonly id: string; readonly until: number }, now: number): boolean {
  if (owner.until < now) return false;
  const [host, pid] = owner.id.split("/");
  if (host !== hostname() || pid === undefined || !/^\d+$/.test(pid)) return true;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
