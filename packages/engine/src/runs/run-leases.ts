/**
 * The leases an engine holds on runs, so that one process at a time executes (or keeps) a run,
 * and the requests other processes leave for the runs it holds.
 *
 * - An engine claims a run before executing it, and keeps the lease while it executes it and,
 *   if it wakes runs, while the run is parked. Its leases are one lease (the store's row for this
 *   owner), renewed in one statement every third of a lease, never queued behind journal writes,
 *   its deadline counted from when it is written: a live engine, however busy, keeps its runs.
 * - Each claim won gives the run's lease epoch (the fencing token): the execution names it in
 *   every append, so once another engine took the run over (this one was thought dead), this
 *   one's next write is refused and it stops (`forget`: not released, not a fault).
 * - Another process that wants something of a run held elsewhere (a signal arrived, a decision,
 *   a cancel) writes a request, which tells the holder through the store's notifier
 *   (`runRequestsTopic`); the holder reads its requests then and applies them as if they had
 *   been made in its own process, removing each once applied: a holder that dies before leaves
 *   it to the next holder (applying one again is harmless). (On one machine the notifier also
 *   calls it a few times a second, the poll this once was; PostgreSQL's wakes it at once.)
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
import { EngineError } from "../errors.js";
import { LEASES_GIVEN_UP_TOPIC, runRequestsTopic } from "../store/lease-store.js";
import { isLeaseLost, type RunRecord, type Store } from "../store/store.js";
import type { RunHost } from "./run-host.js";

/** How long a lease holds without renewal: long enough to ride out a stalled event loop (`EngineOptions.leaseMs`). */
export const LEASE_MS = 30_000;
/** Leases are renewed this many times per lease: two renewals may be lost (a stall, a lost connection) before it lapses. */
const RENEWALS_PER_LEASE = 3;

export class RunLeases {
  /** `<host>/<pid>/<random>`: a holder on this host can be checked for life by its pid. */
  readonly owner = `${hostname()}/${process.pid}/${randomBytes(6).toString("hex")}`;
  /** The runs held here, with the lease epoch each was won under. */
  readonly #held = new Map<string, number>();
  /**
   * Runs given up here whose release did not reach the store (the database was away): still this
   * engine's there, where no other engine takes a run from a live holder. Released again at each
   * renewal until it lands, so that the takeover scan can take them.
   */
  readonly #unreleased = new Set<string>();
  #renewing = false;
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

  /** The lease epoch this engine holds the run under (what its writes name), if it holds it. */
  epoch(runId: string): number | undefined {
    return this.#held.get(runId);
  }

  /** Takes the run's lease (or keeps it); false when another live engine holds it. */
  async claim(run: RunRecord): Promise<boolean> {
    if (this.#closed) return false;
    const now = Date.now();
    // Taken from its holder regardless of its lease only when its process on this host is gone; a
    // lease that looks lapsed from here is taken only if the store finds it lapsed at the claim (the
    // view may be stale: a loaded holder renews late, or the read was answered late).
    const dead = run.owner && run.owner.id !== this.owner && processGoneHere(run.owner.id) ? run.owner.id : undefined;
    const claiming = this.store.claimRun(run.id, this.owner, now + this.leaseMs, now, dead);
    const settled = claiming.then((epoch) => epoch !== undefined);
    this.#claiming.add(settled);
    try {
      const epoch = await claiming;
      if (epoch !== undefined) {
        this.#held.set(run.id, epoch);
        this.#unreleased.delete(run.id);
      }
      // Won while the engine closes: `close` gives it up with the others; no renewal starts.
      if (this.#closed) return false;
      if (epoch === undefined) return false;
      this.#start();
      // Taken over: the requests left for the old holder (which it may have read, not applied) are
      // this engine's now. The store tells of them too, but before this engine listens for them.
      if (run.owner !== undefined && run.owner.id !== this.owner) this.#tick();
      return true;
    } finally {
      this.#claiming.delete(settled);
    }
  }

  async release(runId: string): Promise<void> {
    if (!this.#held.delete(runId)) return;
    try {
      await this.store.releaseRuns(this.owner, runId);
    } catch (error) {
      if (!this.#closed) this.#unreleased.add(runId);
      throw error;
    } finally {
      if (this.#held.size === 0 && this.#unreleased.size === 0) this.#stop();
    }
  }

  /** Another engine took the run over (a write was refused, `LeaseLostError`): it is not this engine's to release or renew. */
  forget(runId: string): void {
    if (this.#held.delete(runId) && this.#held.size === 0) this.#stop();
  }

  /** Gives up every lease (the engine closes): other engines take the runs over at once. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stop();
    await Promise.allSettled([...this.#claiming]);
    if (this.#held.size === 0 && this.#unreleased.size === 0) return;
    this.#held.clear();
    this.#unreleased.clear();
    await this.store.giveUpLeases(this.owner);
    this.store.notifier.publish(LEASES_GIVEN_UP_TOPIC);
  }

  #start(): void {
    // Not unref'd: an engine that holds a run (executing, or parked and kept) keeps its process up.
    this.#timer ??= setInterval(() => this.#renew(), this.leaseMs / RENEWALS_PER_LEASE);
    this.#stopHearing ??= this.store.notifier.subscribe(runRequestsTopic(this.owner), () => this.#tick());
  }

  /** One renewal at a time: one still in flight (the database is slow or away) is not doubled. */
  #renew(): void {
    if (this.#closed || this.#renewing) return;
    this.#renewing = true;
    this.store
      .renewLeases(this.owner, this.leaseMs)
      .then(() => this.#releaseAgain())
      .catch((error: unknown) => this.host.onError(error))
      .finally(() => (this.#renewing = false));
  }

  /** Releases what could not be released before (`#unreleased`), now that the store answers. */
  async #releaseAgain(): Promise<void> {
    for (const runId of [...this.#unreleased]) {
      if (this.#closed || this.#held.has(runId)) continue;
      await this.store.releaseRuns(this.owner, runId);
      this.#unreleased.delete(runId);
    }
    if (this.#held.size === 0 && this.#unreleased.size === 0) this.#stop();
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

  /**
   * Applies the requests left for the runs held here, oldest first, each removed once applied.
   * One this engine could not apply because it no longer holds the run (it was taken over, or
   * the engine closed meanwhile) stays, for the run's next holder.
   */
  async #work(): Promise<void> {
    for (const { id, runId, request } of await this.store.runRequests(this.owner)) {
      if (this.#closed) return;
      const applied = await this.host.applyRequest(runId, request).then(
        () => true,
        (error: unknown) => {
          if (isLeaseLost(error) || (EngineError.is(error) && error.code === "closed")) return false;
          this.host.onError(error);
          // Refused by the engine (a decision on a call decided meanwhile, a run that ended): it
          // would be refused again. Anything else (the store failed) is tried again at the next look.
          return EngineError.is(error);
        },
      );
      if (this.#closed) return;
      if (applied) await this.store.removeRunRequest(id);
    }
  }
}

/** A holder is alive while its lease holds; on this host, only while its process exists too. */
function isAlive(owner: { readonly id: string; readonly until: number }, now: number): boolean {
  return owner.until >= now && !processGoneHere(owner.id);
}

/** Whether holder `id` is an engine of this host whose process no longer exists. */
function processGoneHere(id: string): boolean {
  const [host, pid] = id.split("/");
  if (host !== hostname() || pid === undefined || !/^\d+$/.test(pid)) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code !== "EPERM";
  }
}
