import type { BlobStore } from "./blob-store.js";
import type { CredentialStore } from "./credential-store.js";
import type { HostTaskStore } from "./host-task-store.js";
import type { LeaseStore } from "./lease-store.js";
import type { Notifier } from "./notifier.js";
import type { EraseStore } from "./erase-store.js";
import type { PurgeStore } from "./purge-store.js";
import type { RateLimitStore } from "./rate-limit-store.js";
import type { RunStore } from "./run-store.js";
import type { ScheduleStore } from "./schedule-store.js";
import type { SignalStore } from "./signal-store.js";
import type { ToolsetStore } from "./toolset-store.js";
import type { WebhookBindingStore } from "./webhook-binding-store.js";

export type { ChangedRun, CreateRunResult, NewRun, RecordedRunEvent, RunCaller, RunCounts, RunPatch, RunQuery, RunRecord, RunStore } from "./run-store.js";
export type { NewSignal, SignalStore, StoredSignal } from "./signal-store.js";
export type { PurgeCounts, PurgeSelection, PurgeStore } from "./purge-store.js";
export type { ActiveRun, EraseCounts, EraseStore } from "./erase-store.js";
export type { LeaseStore, PendingRunRequest, RunRequest } from "./lease-store.js";
export type { ToolsetOwner, ToolsetStore } from "./toolset-store.js";
export type * from "./schedule-store.js";
export type { WebhookBinding, WebhookBindingStore } from "./webhook-binding-store.js";
export { StoreConflictError } from "./store-conflict-error.js";
export { isLeaseLost, LeaseLostError } from "./lease-lost-error.js";
export { StoreBusyError } from "./store-busy-error.js";

/**
 * The store seam: everything the engine keeps, as sub-stores each with its own contract suite
 * (`contracts/`, exported from `@tapedeck/engine/testing`). SQLite in a data folder is the
 * embedded default (`sqlite-store.ts`); `openStore` opens one from a folder or a URL. See
 * `docs/design/store.md` for what each part promises and what a PostgreSQL implementation
 * must provide.
 *
 * The flat sub-stores (runs and journal, signals, leases and requests, toolsets and observed
 * shapes, webhook bindings) are reached directly on the store (`store.getRun`, `store.claimRun`):
 * their writes meet in the runs' rows and commits. The parts with a life of their own are
 * properties: `credentials`, `hostTasks`, and the `notifier` every process sharing the store hears.
 *
 * Durability: when a promise of a write resolves, what it wrote survives a crash of the process
 * (and, with durability `full`, of the machine). Writes of concurrent runs share commits.
 */
export interface Store extends RunStore, SignalStore, LeaseStore, ToolsetStore, WebhookBindingStore {
  /** The credential vault's sealed credentials (see `credential-store.ts`). */
  readonly credentials: CredentialStore;
  /** Host tool calls waiting for workers, held by them or answered (see `host-task-store.ts`). */
  readonly hostTasks: HostTaskStore;
  /** Deletes ended runs and idle direct sessions whole, in bounded batches (see `purge-store.ts`). */
  readonly purge: PurgeStore;
  /** Deletes everything of one namespace (an end user), in bounded batches (see `erase-store.ts`). */
  readonly erase: EraseStore;
  /** Wake-ups between the processes sharing this store (see `notifier.ts`). */
  readonly notifier: Notifier;
  /**
   * The sliding windows of tools' rate limits (`rate-limit-store.ts`), shared by every process on
   * the store. A store without it cannot keep rate limits: calls of a tool that has one are refused.
   */
  readonly rateLimits?: RateLimitStore;
  /** Schedules and their fires (`schedule-store.ts`); a store without it keeps no schedules (`engine.schedules` refuses). */
  readonly schedules?: ScheduleStore;
  /** Results direct tool sessions spilled (`blob-store.ts`); a store without it leaves them in the engine's memory (lost at a restart). */
  readonly directBlobs?: BlobStore;
  /**
   * The data folder the store lives in, when it has one (a SQLite store opened with `openStore`
   * or `SqliteStore.openDataFolder`): the credential vault's master key file and the server's
   * secret default to files in it. Absent for a store without a folder (in memory, a database URL).
   */
  readonly dataFolder?: string;
  /**
   * Asks the database once, now, whether it answers (no retry, at most `STORE_PROBE_TIMEOUT_MS`):
   * resolves with what is wrong, for an operator (a database URL's password never in it), or
   * undefined when it answers. A server's `/health` says what this says.
   */
  probe(): Promise<string | undefined>;
  /** Flushes pending commits and closes (its notifier too). */
  close(): Promise<void>;
}

/** How long `Store.probe` waits for the database: a health check must answer while the database hangs. */
export const STORE_PROBE_TIMEOUT_MS = 5_000;

/** How hard a commit tries to survive a crash. */
export type Durability =
  /** Each commit reaches the disk before it resolves (fsync): survives power loss. Default. */
  | "full"
  /** Survives a crash of the process, not of the machine (WAL without fsync per commit). */
  | "normal"
  /** Nothing is flushed; for tests and throwaway data. */
  | "off";
