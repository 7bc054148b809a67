/**
 * How runs and journal entries map to SQLite rows, and back.
 *
 * Invariants:
 * - Reading back what was written gives a deeply equal object: an optional field that was
 *   absent is absent again (SQL NULL), and JSON values (including `null`) are kept as JSON text.
 * - A journal row's `kind`, `seq` and `at` are columns for querying; its `body` holds the entry
 *   without `index`, `at` and `kind` (so `seq` lives in both: the body is the source of truth).
 */
import { RunStatus, type JournalEntry, type JsonValue, type RunError, type RunWait } from "@tapedeck/protocol";
import { GIVEN_UP_UNTIL } from "./lease-store.js";
import type { NewRun, RunRecord } from "./store.js";

export interface RunRow {
  readonly id: string;
  readonly toolset_id: string;
  readonly status: string;
  readonly source: string;
  readonly js: string;
  readonly source_map: string;
  readonly input: string;
  readonly output: string | null;
  readonly error: string | null;
  readonly labels: string | null;
  readonly namespace: string | null;
  readonly parent_id: string | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly journal_length: number;
  readonly waits: string | null;
  readonly wake_at: number | null;
  readonly decisions: number;
  readonly owner: string | null;
  /** The owner's lease (`node_leases.lease_until`, joined): absent on a row being written. */
  readonly lease_until?: number | null;
  readonly idempotency_key: string | null;
  readonly expires_at: number | null;
  readonly caller_run_id: string | null;
  readonly caller_seq: number | null;
  readonly host_faults: number;
  /** Of `host_faults`, the takeovers after a process died (absent from rows read before migration 22). */
  readonly host_crashes?: number;
  readonly last_fault: string | null;
}

export interface JournalRow {
  readonly run_id: string;
  readonly idx: number;
  readonly kind: string;
  readonly seq: number | null;
  readonly at: number;
  readonly body: string;
}

/** A new run's row: not updated yet, holding `journalLength` entries. */
export function newRunRow(run: NewRun, journalLength: number): RunRow {
  return {
    id: run.id,
    toolset_id: run.toolsetId,
    status: run.status,
    source: run.source,
    js: run.js,
    source_map: run.sourceMap,
    input: JSON.stringify(run.input),
    output: null,
    error: null,
    labels: run.labels === undefined ? null : JSON.stringify(run.labels),
    namespace: run.namespace ?? null,
    parent_id: run.parentId ?? null,
    created_at: run.createdAt,
    updated_at: run.createdAt,
    journal_length: journalLength,
    waits: null,
    wake_at: null,
    decisions: 0,
    owner: null,
    idempotency_key: run.idempotencyKey ?? null,
    expires_at: run.expiresAt ?? null,
    caller_run_id: run.caller?.runId ?? null,
    caller_seq: run.caller?.seq ?? null,
    host_faults: 0,
    last_fault: null,
  };
}

export function runFromRow(row: RunRow): RunRecord {
  return {
    id: row.id,
    toolsetId: row.toolset_id,
    source: row.source,
    js: row.js,
    sourceMap: row.source_map,
    input: JSON.parse(row.input) as JsonValue,
    // The store wrote these columns itself, from the typed values.
    status: row.status as RunStatus,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    journalLength: row.journal_length,
    ...(row.labels !== null && { labels: JSON.parse(row.labels) as Record<string, string> }),
    ...(row.namespace !== null && { namespace: row.namespace }),
    ...(row.parent_id !== null && { parentId: row.parent_id }),
    ...(row.idempotency_key !== null && { idempotencyKey: row.idempotency_key }),
    ...(row.expires_at !== null && { expiresAt: row.expires_at }),
    ...(row.caller_run_id !== null && { caller: { runId: row.caller_run_id, seq: row.caller_seq ?? 0 } }),
    ...(row.output !== null && { output: JSON.parse(row.output) as JsonValue }),
    ...(row.error !== null && { error: JSON.parse(row.error) as RunError }),
    ...(row.waits !== null && { waits: JSON.parse(row.waits) as RunWait[] }),
    ...(row.wake_at !== null && { wakeAt: row.wake_at }),
    ...(row.owner !== null && { owner: { id: row.owner, until: row.lease_until ?? GIVEN_UP_UNTIL } }),
    ...(row.host_faults > 0 && { hostFaults: { count: row.host_faults, last: row.last_fault ?? "", crashes: row.host_crashes ?? 0 } }),
  };
}

/** The run of a row, or, when the row cannot be read, a record that says so (`RunRecord.damaged`). */
export function runOrDamaged(row: RunRow): RunRecord {
  try {
    return runFromRow(row);
  } catch (error) {
    const status = Object.values(RunStatus).includes(row.status as RunStatus) ? (row.status as RunStatus) : RunStatus.failed;
    const number = (value: unknown): number => (typeof value === "number" ? value : 0);
    return {
      id: String(row.id),
      toolsetId: String(row.toolset_id),
      source: "",
      js: "",
      sourceMap: "",
      input: null,
      status,
      createdAt: number(row.created_at),
      updatedAt: number(row.updated_at),
      journalLength: number(row.journal_length),
      damaged: `its row cannot be read (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

export function journalRow(runId: string, entry: JournalEntry): JournalRow {
  const { index, at, kind, ...payload } = entry;
  const seq = "seq" in entry ? entry.seq : null;
  return { run_id: runId, idx: index, kind, seq, at, body: JSON.stringify(payload) };
}

export function entryFromRow(row: Pick<JournalRow, "idx" | "at" | "kind" | "body">): JournalEntry {
  const payload = JSON.parse(row.body) as object;
  // The row was written by `journalRow` from a typed entry, so kind and payload agree.
  return { index: row.idx, at: row.at, kind: row.kind, ...payload } as JournalEntry;
}
