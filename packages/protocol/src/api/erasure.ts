import { namespace } from "./labels.js";
import { schemaFor } from "./schema-for.js";

/** `DELETE /v1/namespaces/:namespace`: erases an end user. */
export interface EraseNamespaceParams {
  readonly namespace: string;
}

export const eraseNamespaceParams = schemaFor<EraseNamespaceParams>()({
  type: "object",
  properties: { namespace },
  required: ["namespace"],
  additionalProperties: false,
});

export interface EraseNamespaceQuery {
  /** Cancel the namespace's runs that have not ended first. Default false: the erasure is refused (409) while one exists. */
  readonly cancel?: boolean;
  /** Count what would be deleted, delete and cancel nothing. Default false. */
  readonly dryRun?: boolean;
}

export const eraseNamespaceQuery = schemaFor<EraseNamespaceQuery>()({
  type: "object",
  properties: {
    cancel: { type: "boolean", description: "Cancel the namespace's runs that have not ended first (else 409 while one exists)." },
    dryRun: { type: "boolean", description: "Count, delete nothing." },
  },
  additionalProperties: false,
});

/** What an erasure deleted (a dry run: would delete), by kind. */
export interface ErasedNamespace {
  readonly namespace: string;
  readonly dryRun: boolean;
  /** Runs (scripts and workflows), each whole. */
  readonly runs: number;
  /** Direct tool sessions. */
  readonly sessions: number;
  readonly journalEntries: number;
  /** Direct sessions' spilled results. */
  readonly blobs: number;
  /** Direct sessions' sealed arguments of sensitive calls. */
  readonly sealedArguments: number;
  /** Signals sent to its runs, and run-bound webhook URLs. */
  readonly signals: number;
  /** Requests left for its runs by other processes. */
  readonly requests: number;
  /** Run events not yet fanned out to webhooks. */
  readonly events: number;
  readonly hostTasks: number;
  /** Its namespace credentials and its runs' own. */
  readonly credentials: number;
  /** Calls counted in its tools' rate-limit windows. */
  readonly rateLimitCalls: number;
  readonly schedules: number;
  readonly memoryDocuments: number;
  readonly workspaceFiles: number;
  /** Webhook deliveries of its runs' events (pending ones too) and to its endpoints. */
  readonly webhookDeliveries: number;
  /** Its webhook endpoints. */
  readonly webhookEndpoints: number;
  /** Runs cancelled first; for a dry run, those `cancel` would cancel. */
  readonly cancelled: readonly string[];
  /** Commits it took (0 for a dry run). */
  readonly batches: number;
  /**
   * The deleted bytes are gone from the store's SQLite files (database, WAL) and the memory
   * database. False on PostgreSQL (its VACUUM and WAL recycling remove them), or when another
   * process's reader kept a WAL from being truncated.
   */
  readonly compacted: boolean;
}

const count = { type: "integer", minimum: 0 } as const;

export const erasedNamespace = schemaFor<ErasedNamespace>()({
  type: "object",
  properties: {
    namespace: { type: "string" },
    dryRun: { type: "boolean" },
    runs: count,
    sessions: count,
    journalEntries: count,
    blobs: count,
    sealedArguments: count,
    signals: count,
    requests: count,
    events: count,
    hostTasks: count,
    credentials: count,
    rateLimitCalls: count,
    schedules: count,
    memoryDocuments: count,
    workspaceFiles: count,
    webhookDeliveries: count,
    webhookEndpoints: count,
    cancelled: { type: "array", items: { type: "string" } },
    batches: count,
    compacted: { type: "boolean" },
  },
  required: [
    "namespace",
    "dryRun",
    "runs",
    "sessions",
    "journalEntries",
    "blobs",
    "sealedArguments",
    "signals",
    "requests",
    "events",
    "hostTasks",
    "credentials",
    "rateLimitCalls",
    "schedules",
    "memoryDocuments",
    "workspaceFiles",
    "webhookDeliveries",
    "webhookEndpoints",
    "cancelled",
    "batches",
    "compacted",
  ],
});
