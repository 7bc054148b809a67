import type { JournalEntry, JsonSchema, JsonValue, PinnedToolset, RunError, RunEvent, RunStatus, RunWait } from "@tapedeck/protocol";
import type { CredentialStore } from "./credential-store.js";
import type { WebhookOutboxStore } from "./webhook-outbox.js";

/**
 * The store seam: runs, their journals and toolsets. SQLite is the embedded default;
 * PostgreSQL comes later and must pass the same contract suite (`store-contract.ts`).
 *
 * Durability: when a promise returned by `append` or `createRun` resolves, what it wrote
 * survives a crash of the process (and, with durability `full`, of the machine). Appends of
 * concurrent runs share commits (group commit).
 */
export interface Store {
  /** Saves a toolset; saving the same id again is a no-op. */
  putToolset(toolset: PinnedToolset): Promise<void>;
  getToolset(id: string): Promise<PinnedToolset | undefined>;

  /** Saves the observed result shape of a toolset's tool (`group.name`), replacing the last one. */
  putObservedShape(toolsetId: string, tool: string, shape: JsonSchema): Promise<void>;
  /** The observed result shapes of a toolset's tools, by `group.name`. */
  getObservedShapes(toolsetId: string): Promise<Record<string, JsonSchema>>;

  /**
   * Creates a run and writes its first journal entries, atomically. Fails if the id exists.
   * With an `idempotencyKey` a run of the same namespace already has, nothing is written and
   * that run's id is returned (`duplicate`): of two concurrent creations with one key, one wins.
   */
  createRun(run: NewRun, entries: readonly JournalEntry[]): Promise<CreateRunResult>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** The run created with this idempotency key in this namespace (none: the runs without one), if any. */
  getRunByIdempotencyKey(key: string, namespace?: string): Promise<RunRecord | undefined>;
  listRuns(query?: RunQuery): Promise<RunRecord[]>;

  /**
   * Appends entries to a run's journal and applies `patch` to the run, in one commit.
   * `entries[i].index` must continue the journal exactly (else `StoreConflictError`, and
   * nothing of this batch is written): two writers of one run cannot both succeed.
   */
  append(runId: string, entries: readonly JournalEntry[], patch?: RunPatch): Promise<void>;

  /** Entries with `index >= from`, in order, at most `limit`. */
  readJournal(runId: string, from?: number, limit?: number): Promise<JournalEntry[]>;

  /** The earliest `wakeAt` of a waiting run (later than `after`; of runs `owner` holds), if any. */
  nextWakeAt(options?: { readonly after?: number; readonly owner?: string }): Promise<number | undefined>;

  /**
   * Keeps a signal for a run until a `signal()` call takes it. With a `key` already used for
   * this run, nothing is written and the first signal's id is returned (`duplicate`).
   */
  putSignal(signal: NewSignal): Promise<{ readonly id: number; readonly duplicate: boolean }>;
  /** A run's signals of this name that no call has taken yet, oldest first. */
  pendingSignals(runId: string, name: string): Promise<StoredSignal[]>;
  /** The id of the signal kept for the run with this key (taken or not), if any: a resumed sender's question "did I send it?". */
  signalByKey(runId: string, key: string): Promise<number | undefined>;

  /**
   * Takes (or keeps) the lease of a run for `owner` until `until`: succeeds when the run has no
   * owner, is `owner`'s already, its lease lapsed before `now`, or it is held by `takeOverFrom`
   * (an owner known to be dead). False when another holds it. Taking a `running` run over from
   * another owner counts one host fault (that owner stopped under it without releasing it).
   */
  claimRun(runId: string, owner: string, until: number, now: number, takeOverFrom?: string): Promise<boolean>;
  /** Counts a host fault of the run (the engine failed executing it), with what it was; resolves with the count since its last progress. */
  noteHostFault(runId: string, message: string): Promise<number>;
  /** Extends every lease `owner` holds to `until`. */
  renewLeases(owner: string, until: number): Promise<void>;
  /** Gives up `owner`'s lease of the run (or of every run it holds, without `runId`). */
  releaseRuns(owner: string, runId?: string): Promise<void>;

  /** Asks the holder of a run to apply `request`. */
  putRunRequest(runId: string, request: RunRequest, at: number): Promise<void>;
  /** Removes and returns the requests for the runs `owner` holds, oldest first. */
  takeRunRequests(owner: string): Promise<{ readonly runId: string; readonly request: RunRequest }[]>;

  /** Binds a webhook token (by its hash) to a run and a signal name. */
  putWebhook(hook: WebhookBinding): Promise<void>;
  getWebhook(tokenHash: string): Promise<WebhookBinding | undefined>;

  /** Saves an API key, known by the hash of its secret. Fails if its id or hash exists. */
  putApiKey(key: ApiKeyRecord): Promise<void>;
  /** The key whose secret hashes to `hash`, if any. */
  getApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, oldest first. */
  listApiKeys(): Promise<ApiKeyRecord[]>;

  /** The HTTP server's webhook endpoints and the deliveries it owes them (see `webhook-outbox.ts`). */
  readonly webhookOutbox: WebhookOutboxStore;

  /** The credential vault's sealed credentials (see `credential-store.ts`). */
  readonly credentials: CredentialStore;

  /** Flushes pending commits and closes. */
  close(): Promise<void>;
}

/** What a run is made of when it starts. */
export interface NewRun {
  readonly id: string;
  readonly toolsetId: string;
  /** The model's TypeScript, as written. */
  readonly source: string;
  /** The JavaScript the sandbox runs, pinned with the run so replays never depend on a compiler upgrade. */
  readonly js: string;
  /** The source map from `js` back to `source`. */
  readonly sourceMap: string;
  readonly input: JsonValue;
  readonly status: RunStatus;
  readonly createdAt: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  /** The run this one was forked from. */
  readonly parentId?: string;
  /** For a workflow's child run: the run that started it, and the seq of its `workflows.<name>.start` call (its end wakes that run). */
  readonly caller?: RunCaller;
  /** Names the start: a second run with the same key in the same namespace is never created. */
  readonly idempotencyKey?: string;
  /** When the run is cancelled if it has not ended by then (its TTL), ms since the epoch. */
  readonly expiresAt?: number;
}

/** The run (and its call) that started a workflow's child run. */
export interface RunCaller {
  readonly runId: string;
  readonly seq: number;
}

/** What `createRun` did. */
export type CreateRunResult =
  /** The run and its entries were written. */
  | { readonly kind: "created" }
  /** A run of the namespace has the idempotency key: nothing was written; `runId` is that run's. */
  | { readonly kind: "duplicate"; readonly runId: string };

export interface RunRecord extends NewRun {
  readonly updatedAt: number;
  /** Number of journal entries. */
  readonly journalLength: number;
  readonly output?: JsonValue;
  readonly error?: RunError;
  /** What the run waits for: everything while `waiting`; calls waiting for a decision at any time. */
  readonly waits?: readonly RunWait[];
  /** While `waiting`: when its earliest timer is due. */
  readonly wakeAt?: number;
  /** The engine that holds the run's lease, and until when. */
  readonly owner?: { readonly id: string; readonly until: number };
  /**
   * Set only in a list asked for with `RunQuery.includeDamaged`: the run's row cannot be read
   * (why). Then only `id`, `toolsetId`, the times and `journalLength` are the row's; the rest
   * are placeholders (`status` is the row's if it is a status, else `failed`).
   */
  readonly damaged?: string;
  /**
   * Executions of the run that ended in a fault of the host since it last made progress (absent:
   * none), and what the last one was: see `runs/host-faults.ts`.
   */
  readonly hostFaults?: { readonly count: number; readonly last: string };
}

/** What another process asks of the engine holding a run. */
export type RunRequest =
  | { readonly kind: "signal"; readonly name: string }
  | { readonly kind: "decide"; readonly seq: number; readonly decision: "approved" | "rejected"; readonly reason?: string }
  | { readonly kind: "cancel"; readonly reason: string }
  /** A child run this run started (a workflow) ended: the run's `result()` of it can settle. */
  | { readonly kind: "child"; readonly runId: string };

/** Changes to a run written in the same commit as journal entries. A field left out is kept. A run that ends loses its lease in that commit. */
export interface RunPatch {
  readonly status?: RunStatus;
  readonly output?: JsonValue;
  readonly error?: RunError;
  readonly updatedAt: number;
  /** Replaces `waits`; `null` clears it. */
  readonly waits?: readonly RunWait[] | null;
  /** Replaces `wakeAt`; `null` clears it. */
  readonly wakeAt?: number | null;
  /** Signals taken by `signal()` calls (by seq) whose outcomes are in these entries. Each must still be pending, else `StoreConflictError`. */
  readonly consumeSignals?: readonly { readonly id: number; readonly seq: number }[];
  /** Events this commit makes happen, recorded for `webhookOutbox.recordedEvents` (see `RunEvent`). */
  readonly events?: readonly RunEvent[];
  /**
   * Another run to wake in this commit, if it is `waiting`: its `wakeAt` becomes `updatedAt`
   * unless it is earlier. A child run's end wakes its caller this way, so that a caller parked on
   * it wakes even if the process dies before telling it.
   */
  readonly wakeRun?: string;
  /** The run made progress in this commit: its host faults are forgotten (`RunRecord.hostFaults`). */
  readonly clearHostFaults?: boolean;
}

export interface NewSignal {
  readonly runId: string;
  readonly name: string;
  readonly payload: JsonValue;
  readonly at: number;
  /** Makes sending the same signal twice deliver it once (e.g. a model's tool call id). */
  readonly key?: string;
}

export interface StoredSignal {
  readonly id: number;
  readonly name: string;
  readonly payload: JsonValue;
  readonly at: number;
}

export interface WebhookBinding {
  readonly tokenHash: string;
  readonly runId: string;
  readonly name: string;
  readonly createdAt: number;
}

/**
 * An API key of the HTTP server. Only the hash of its secret is kept: whoever reads the store
 * cannot use the key. `namespace` and `labels` limit the runs it reaches; absent, it is not limited.
 */
export interface ApiKeyRecord {
  /** A public name for the key (`key_…`): safe to log and show. */
  readonly id: string;
  /** Hex SHA-256 of the key's secret. */
  readonly hash: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly createdAt: number;
}

export interface RunQuery {
  readonly status?: readonly RunStatus[];
  /** Every label given must match. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  /** Only `waiting` runs whose `wakeAt` is at or before this time (oldest timer first). */
  readonly wakeBy?: number;
  /** Only runs with a call waiting for a decision. */
  readonly needsDecision?: boolean;
  /** Only runs whose lease this engine holds. */
  readonly owner?: string;
  /** Only runs that have not ended whose `expiresAt` is at or before this time (soonest first). */
  readonly expiredBy?: number;
  /** Newest first; at most this many. Default 100. */
  readonly limit?: number;
  /**
   * A run whose row cannot be read (a column that is not what the store wrote: a damaged or
   * hand-edited database) is listed with `damaged` set instead of failing the whole list: for
   * lists shown to people. Default false: a run that cannot be read is an error.
   */
  readonly includeDamaged?: boolean;
}

/** How hard a commit tries to survive a crash. */
export type Durability =
  /** Each commit reaches the disk before it resolves (fsync): survives power loss. Default. */
  | "full"
  /** Survives a crash of the process, not of the machine (WAL without fsync per commit). */
  | "normal"
  /** Nothing is flushed; for tests and throwaway data. */
  | "off";

/** An append did not continue the journal where it ends: another writer got there first. */
export class StoreConflictError extends Error {
  readonly code = "store_conflict";
  constructor(message: string) {
    super(message);
    this.name = "StoreConflictError";
  }
}
