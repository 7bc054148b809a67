/**
 * The leases sub-store: which engine process holds (executes or keeps) each run, and the
 * requests other processes leave for the holder. Contract: `contracts/lease-store-contract.ts`;
 * the design, and the failure cases it answers, in `docs/design/postgres.md` ("Fencing").
 *
 * - A lease is the process's, not the run's: one lease per owner, renewed in one row whatever it
 *   holds (`renewLeases`), so renewing costs O(1) in the runs held. A run is held by its owner
 *   while that owner's lease holds; once it lapsed, anyone may claim the run.
 * - A claim is one atomic conditional update (never two holders). Every claim that changes the
 *   run's owner bumps the run's lease epoch (the fencing token) and returns it; the holder names
 *   it in each append (`RunStore.append`'s `epoch`), and a write under a stale epoch is refused
 *   with `LeaseLostError`: a process that lost a run cannot write into its journal again.
 * - Lease times are the writer's wall clock; a renewal's deadline is counted from when it is
 *   written (not when it was asked for), and a renewal is not queued behind other writes.
 *
 * Notifications: `putRunRequest` publishes `runRequestsTopic(holder)` on the store's notifier
 * once committed, so the holder takes it without waiting for a poll; `claimRun` does too for a
 * run that has requests waiting (left while another held it, or none did).
 */
export interface LeaseStore {
  /**
   * Takes (or keeps) the lease of a run for `owner`, whose lease then holds at least until
   * `until`: succeeds when the run has no owner, is `owner`'s already, its owner's lease lapsed
   * before `now`, or it is held by `takeOverFrom` (an owner known to be dead). Resolves with the
   * run's lease epoch (bumped when the owner changed), or undefined when another holds it.
   * Taking a `running` run over from another owner that did not give its lease up counts one
   * host fault (that owner stopped under it without releasing it).
   */
  claimRun(runId: string, owner: string, until: number, now: number, takeOverFrom?: string): Promise<number | undefined>;
  /** Counts a host fault of the run (the engine failed executing it), with what it was; resolves with the count since its last progress. */
  noteHostFault(runId: string, message: string): Promise<number>;
  /**
   * The holder of lease `epoch` found the run taken over from it while it was alive (a write was
   * refused, `LeaseLostError`): the host fault that takeover counted ("stopped without shutting
   * down") is taken back, if it is still the last one counted. A slow node is not a crash.
   */
  noteLeaseLost(runId: string, epoch: number): Promise<void>;
  /**
   * The holder of lease `epoch` executed the run up to where it only waits for answers from
   * outside (its calls sent, its sandbox idle) without faulting: the takeovers counted after
   * processes died under it are forgiven (`RunRecord.hostFaults.crashes`), the faults the engine
   * threw are kept. A server killed while the run waited is no fault of the run; a run that kills
   * its host does so before it gets there. Nothing when another holds the run now.
   */
  forgiveCrashes(runId: string, epoch: number): Promise<void>;
  /**
   * Extends `owner`'s lease (every run it holds) to `leaseMs` after the moment the renewal is
   * written, in one row, on a path that does not wait behind other writes. A lease given up
   * (`giveUpLeases`) is not renewed.
   */
  renewLeases(owner: string, leaseMs: number): Promise<void>;
  /**
   * Gives up every lease `owner` holds at a clean stop while still naming their holder
   * (`GIVEN_UP_UNTIL`): anyone may claim them at once, taking over a `running` one counts no host
   * fault, and other nodes find them (`RunQuery.leaseLapsedBy`).
   */
  giveUpLeases(owner: string): Promise<void>;
  /**
   * Gives up `owner`'s lease of the run (or of every run it holds, without `runId`). A `running`
   * run released so is marked released now (wall clock): `RunQuery.releasedBefore` finds it, so
   * that it is taken again after a backoff (by any process), never left without a holder.
   */
  releaseRuns(owner: string, runId?: string): Promise<void>;

  /** Asks the holder of a run to apply `request`; tells the holder (`runRequestsTopic`) once committed. */
  putRunRequest(runId: string, request: RunRequest, at: number): Promise<void>;
  /**
   * The requests for the runs `owner` holds, oldest first, left in the store: the holder removes
   * each (`removeRunRequest`) once it applied it, so a holder that dies first leaves it to the next.
   * Applying a request is idempotent (a signal looked for again, a decision or cancel journaled once).
   */
  runRequests(owner: string): Promise<PendingRunRequest[]>;
  /** Removes a request once applied (nothing if it is gone already). */
  removeRunRequest(id: number): Promise<void>;
}

/** A request kept for a run's holder (`LeaseStore.runRequests`). */
export interface PendingRunRequest {
  /** Increasing in the order requests were kept; names it for `removeRunRequest`. */
  readonly id: number;
  readonly runId: string;
  readonly request: RunRequest;
}

/** What another process asks of the engine holding a run. */
export type RunRequest =
  /** A signal was kept for the run: a `signal()` call waiting for `name` looks again. */
  | { readonly kind: "signal"; readonly name: string }
  /** A decision on a call waiting for one: the holder journals it. */
  | { readonly kind: "decide"; readonly seq: number; readonly decision: "approved" | "rejected"; readonly reason?: string }
  /** The run is to be cancelled: the holder journals the cancel. */
  | { readonly kind: "cancel"; readonly reason: string }
  /** A child run this run started (a workflow) ended: the run's `result()` of it can settle. */
  | { readonly kind: "child"; readonly runId: string };

/** The lease time of a lease given up at a clean stop (`giveUpLeases`): lapsed for everyone, and not a crash. */
export const GIVEN_UP_UNTIL = 0;

/** Published once an engine gave up its leases at a clean stop: engines that take runs over look at once. */
export const LEASES_GIVEN_UP_TOPIC = "leases-given-up";

/** The notifier topic of the requests left for the runs `owner` holds. */
export function runRequestsTopic(owner: string): string {
  return `run-requests/${owner}`;
}
