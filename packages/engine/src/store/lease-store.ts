/**
 * The leases sub-store: which engine process holds (executes or keeps) each run, until when,
 * and the requests other processes leave for the holder. A lease is a row any process can
 * claim once it lapsed: with several nodes on one database the claim must be one atomic
 * conditional update (PostgreSQL: `UPDATE … WHERE …` or `SELECT … FOR UPDATE SKIP LOCKED`).
 * Contract: `contracts/lease-store-contract.ts`.
 *
 * Notifications: `putRunRequest` publishes `runRequestsTopic(holder)` on the store's notifier
 * once committed, so the holder takes it without waiting for a poll; `claimRun` does too for a
 * run that has requests waiting (left while another held it, or none did).
 */
export interface LeaseStore {
  /**
   * Takes (or keeps) the lease of a run for `owner` until `until`: succeeds when the run has no
   * owner, is `owner`'s already, its lease lapsed before `now`, or it is held by `takeOverFrom`
   * (an owner known to be dead). False when another holds it. Taking a `running` run over from
   * another owner counts one host fault (that owner stopped under it without releasing it).
   */
  claimRun(runId: string, owner: string, until: number, now: number, takeOverFrom?: string): Promise<boolean>;
  /** Counts a host fault of the run (the engine failed executing it), with what it was; resolves with the count since its last progress. */
  noteHostFault(runId: string, message: string): Promise<number>;
  /**
   * Extends every lease `owner` holds to `until`. With `GIVEN_UP_UNTIL` it gives them all up at a
   * clean stop while still naming their holder: anyone may claim them at once, taking over a
   * `running` one counts no host fault, and other nodes find them (`RunQuery.leaseLapsedBy`).
   */
  renewLeases(owner: string, until: number): Promise<void>;
  /** Gives up `owner`'s lease of the run (or of every run it holds, without `runId`). */
  releaseRuns(owner: string, runId?: string): Promise<void>;

  /** Asks the holder of a run to apply `request`; tells the holder (`runRequestsTopic`) once committed. */
  putRunRequest(runId: string, request: RunRequest, at: number): Promise<void>;
  /** Removes and returns the requests for the runs `owner` holds, oldest first. */
  takeRunRequests(owner: string): Promise<{ readonly runId: string; readonly request: RunRequest }[]>;
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

/** The lease time of a lease given up at a clean stop (`renewLeases`): lapsed for everyone, and not a crash. */
export const GIVEN_UP_UNTIL = 0;

/** Published once an engine gave up its leases at a clean stop: engines that take runs over look at once. */
export const LEASES_GIVEN_UP_TOPIC = "leases-given-up";

/** The notifier topic of the requests left for the runs `owner` holds. */
export function runRequestsTopic(owner: string): string {
  return `run-requests/${owner}`;
}
