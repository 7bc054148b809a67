import type { JournalEntry, JournalEvent, JsonValue, ToolFailure } from "@tapedeck/protocol";
import type { SessionApproval } from "@tapedeck/protocol/api";
import type { RunRecord } from "../store/store.js";
import { sha256Hex } from "../util/ids.js";
import { directIdempotencyKey } from "./direct-call-key.js";
import type { DirectOptions } from "./direct-options.js";
import type { ModelContent } from "./model-content.js";
import type { ToolFindRecord } from "./tool-find.js";

/**
 * A direct tool session's journal, read: what the session knows after a restart, as a pure
 * function of its entries. The session's journal is a run's (the store's runs and journal), with
 * entries of its own (`direct.*`, hidden from the model) beside the call intake's (`call.*`):
 *
 * - `direct.bound`: a tool table, with what rebuilds it (`SessionTable`);
 * - `direct.call`: a model tool call by its call id, under a binding — a toolset call's `seq`, or
 *   the `answer` of one that was never sent (own tools, unknown, unloaded, denied);
 * - `direct.asked`: the call waits for a human, signed with its binding, until `expiresAt`;
 * - `direct.always` / `direct.expired`: a sticky approval; an approval nobody gave in time.
 *
 * Invariant: the state read here and the state a live session keeps are the same function of the
 * journal, so a session answers a tool call the same way before and after a restart.
 */

/** What a binding's entry records: enough to rebuild its tool table from the pinned toolset. */
export interface SessionTable {
  readonly toolset: string;
  readonly options: DirectOptions;
  /** The tool globs that chose the table's tools; absent: every tool of the toolset. */
  readonly tools?: readonly string[];
}

/** What a call answered without sending records: the model's content, and for `tool_find` what it loaded. */
export interface RecordedAnswer {
  readonly content: ModelContent;
  readonly found?: ToolFindRecord;
}

export interface SessionCall {
  readonly callId: string;
  readonly toolCallId: string;
  /** The model's name for the tool. */
  readonly name: string;
  readonly binding: string;
  readonly seq?: number;
  readonly answer?: RecordedAnswer;
}

export interface AskedApproval {
  readonly summary: string;
  readonly reason: string;
  readonly ruleId?: string;
  readonly signature: string;
  readonly askedAt: number;
  readonly expiresAt: number;
}

/** A toolset call of the session, by seq. */
export interface SessionSeq {
  readonly seq: number;
  readonly callId: string;
  readonly name: string;
  readonly binding: string;
  /** The tool's path and the arguments as scheduled (absent when the call was rejected before being scheduled: it has `outcome`). */
  readonly tool: string;
  readonly args: JsonValue;
  readonly asked?: AskedApproval;
  readonly decided?: "approved" | "rejected";
  /** The reason given with the decision. */
  readonly reason?: string;
  readonly expired?: true;
  readonly outcome?: { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: ToolFailure };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The state of a session, updated entry by entry: `readSession` applies a whole journal; a live
 * session applies each batch as it appends it, so both are the same function of the entries.
 */
export class SessionLedger {
  /** Tables by binding id. */
  readonly tables = new Map<string, SessionTable>();
  /** The latest binding. */
  latest: string | undefined;
  /** Calls by call id. */
  readonly calls = new Map<string, SessionCall>();
  readonly seqs = new Map<number, Mutable<SessionSeq>>();
  /** Tool paths approved "always" in this session. */
  readonly always = new Set<string>();
  /** What `tool_find` calls loaded, in order (the loaded set is rebuilt from them). */
  readonly found: ToolFindRecord[] = [];
  lastSeq = 0;
  /** Toolset calls scheduled and without an outcome yet: in flight, or waiting for a human. */
  readonly unsettled = new Set<number>();
  readonly #callOfSeq = new Map<number, SessionCall>();

  apply(entry: JournalEvent & { readonly at: number }): void {
    switch (entry.kind) {
      case "direct.bound":
        this.tables.set(entry.binding, entry.table as unknown as SessionTable);
        this.latest = entry.binding;
        break;
      case "direct.call": {
        const answer = entry.answer as unknown as RecordedAnswer | undefined;
        const call: SessionCall = {
          callId: entry.callId,
          toolCallId: entry.toolCallId,
          name: entry.name,
          binding: entry.binding,
          ...(entry.call === undefined ? {} : { seq: entry.call }),
          ...(answer === undefined ? {} : { answer }),
        };
        this.calls.set(call.callId, call);
        if (answer?.found !== undefined) this.found.push(answer.found);
        if (entry.call !== undefined) this.#callOfSeq.set(entry.call, call);
        break;
      }
      case "call.scheduled":
      case "call.rejected": {
        this.lastSeq = Math.max(this.lastSeq, entry.seq);
        const call = this.#callOfSeq.get(entry.seq);
        if (call === undefined) break;
        const seq: Mutable<SessionSeq> = { seq: entry.seq, callId: call.callId, name: call.name, binding: call.binding, tool: entry.tool, args: entry.args };
        if (entry.kind === "call.rejected") seq.outcome = { ok: false, error: entry.error };
        else this.unsettled.add(entry.seq);
        this.seqs.set(entry.seq, seq);
        break;
      }
      case "direct.asked": {
        const seq = this.seqs.get(entry.seq);
        if (seq)
          seq.asked = {
            summary: entry.summary,
            reason: entry.reason,
            ...(entry.ruleId === undefined ? {} : { ruleId: entry.ruleId }),
            signature: entry.signature,
            askedAt: entry.at,
            expiresAt: entry.expiresAt,
          };
        break;
      }
      case "call.decided": {
        const seq = this.seqs.get(entry.seq);
        if (seq) {
          seq.decided = entry.decision;
          if (entry.reason !== undefined) seq.reason = entry.reason;
        }
        break;
      }
      case "direct.always":
        this.always.add(entry.tool);
        break;
      case "direct.expired": {
        const seq = this.seqs.get(entry.seq);
        if (seq) seq.expired = true;
        break;
      }
      case "call.completed":
      case "call.failed": {
        const seq = this.seqs.get(entry.seq);
        if (seq) seq.outcome = entry.kind === "call.completed" ? { ok: true, value: entry.result } : { ok: false, error: entry.error };
        this.unsettled.delete(entry.seq);
        break;
      }
      default:
        break;
    }
  }
}

export function readSession(entries: readonly JournalEntry[]): SessionLedger {
  const ledger = new SessionLedger();
  for (const entry of entries) ledger.apply(entry);
  return ledger;
}

/** Whether call `seq` waits for a human now: asked, not decided, no outcome. */
export function isPending(seq: SessionSeq): boolean {
  return seq.asked !== undefined && seq.decided === undefined && seq.outcome === undefined && seq.expired === undefined;
}

/** The record id of session `session` in `namespace`: the same name in another namespace is another session. */
export function sessionRecordId(session: string, namespace: string | undefined): string {
  return `ses_${sha256Hex(JSON.stringify(["tapedeck direct session v1", namespace ?? null, session])).slice(0, 32)}`;
}

/** Whether a run id names a direct tool session's record. */
export function isSessionId(id: string): boolean {
  return /^ses_[0-9a-f]{32}$/.test(id);
}

/** The idempotency key a session's record is created with, so that two creations of one session in a namespace make one. */
export function sessionKey(session: string): string {
  return `tapedeck.direct-session:${session}`;
}

/** The session's name, from its record's input (`{ session }`). */
export function sessionNameOf(record: RunRecord): string {
  const input = record.input;
  return typeof input === "object" && input !== null && !Array.isArray(input) && typeof input.session === "string" ? input.session : record.id;
}

/** A pending call as approvers see it. */
export function approvalView(record: RunRecord, call: SessionSeq): SessionApproval {
  const asked = call.asked!;
  return {
    id: directIdempotencyKey(record.id, call.seq),
    session: sessionNameOf(record),
    sessionId: record.id,
    seq: call.seq,
    tool: call.tool,
    modelName: call.name,
    args: call.args,
    summary: asked.summary,
    reason: asked.reason,
    ...(asked.ruleId === undefined ? {} : { ruleId: asked.ruleId }),
    binding: call.binding,
    askedAt: asked.askedAt,
    expiresAt: asked.expiresAt,
    labels: record.labels ?? {},
    ...(record.namespace === undefined ? {} : { namespace: record.namespace }),
  };
}

/**
 * The pending approvals a session's journal holds, oldest first (read without holding the
 * session), but for those expired by `now`: nobody can decide them any more, even when their
 * session is not live to write `direct.expired` yet (it does at its next request).
 */
export function pendingApprovals(record: RunRecord, ledger: SessionLedger, now: number): SessionApproval[] {
  return [...ledger.seqs.values()]
    .filter((call) => isPending(call) && now < call.asked!.expiresAt)
    .map((call) => approvalView(record, call))
    .sort((a, b) => a.seq - b.seq);
}
