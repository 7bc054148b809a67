import type { Decision, JournalEntry, PinnedToolset } from "@tapedeck/protocol";
import type {
  BindRequest,
  BlobPageAnswer,
  BoundSession,
  SessionApproval,
  SessionDecision,
  SessionDecisionRequest,
  ToolCallAnswer,
  ToolCallRequest,
} from "@tapedeck/protocol/api";
import { EngineError } from "../errors.js";
import { REPLAY_VERSION } from "../runs/history.js";
import type { RunRecord } from "../store/store.js";
import { DirectSession, type SessionDeps } from "./direct-session.js";
import { blobPage } from "./fetch-blob.js";
import type { DirectSessions, SessionFilter, SessionRecordView, SessionRef } from "./direct-sessions.js";
import { isSessionId, pendingApprovals, readSession, sessionKey, sessionNameOf, sessionRecordId } from "./session-journal.js";
import { boundTableOf, sessionTableOf } from "./session-table.js";

/**
 * The engine's direct tool sessions (`Engine.direct`): each session's record is a run's in the
 * store (id `ses_…`, derived from the namespace and the session's name; `waiting` for ever, never
 * executed as a script), its journal a run's journal. A session is live in at most one engine at
 * a time, which holds its lease (as for a run); another process's decision on it is left as a
 * request its holder applies. Listing approvals reads journals without holding them.
 *
 * Invariant: a session outside this engine's memory is read again from its journal whole; a fault
 * of the store drops the live session, never its journal.
 */

export interface SessionLeases {
  /** Takes (or keeps) the record's lease; false when another live engine holds it. */
  claim(run: RunRecord): Promise<boolean>;
  release(runId: string): Promise<void>;
}

export interface SessionHostDeps extends SessionDeps {
  readonly leases: SessionLeases;
  /** Throws `misconfigured` when this engine cannot serve the toolset's tools. */
  readonly checkSources: (toolset: PinnedToolset) => void;
  /** Tells the engine's error listener of a session's fault. */
  readonly onError: (error: unknown) => void;
}

export class DirectSessionHost implements DirectSessions {
  readonly #deps: SessionHostDeps;
  readonly #live = new Map<string, Promise<DirectSession>>();
  #closed = false;

  constructor(deps: Omit<SessionHostDeps, "fault">) {
    this.#deps = {
      ...deps,
      fault: (sessionId, error) => {
        this.#live.delete(sessionId);
        void this.#deps.leases.release(sessionId).catch(() => {});
        deps.onError(error);
      },
    };
  }

  async find(ref: SessionRef): Promise<SessionRecordView | undefined> {
    // A live session's name, namespace and labels never change: no read of the store per call.
    const live = await this.#liveSession(ref);
    const record = live?.record ?? (await this.#deps.store.getRun(sessionRecordId(ref.session, ref.namespace)));
    return record === undefined ? undefined : viewOf(record);
  }

  async bind(ref: SessionRef, request: BindRequest): Promise<BoundSession> {
    this.#open();
    const toolset = await this.#deps.toolset(request.toolset);
    const table = sessionTableOf(request);
    const bound = boundTableOf(table, toolset.pinned);
    this.#deps.checkSources(toolset.pinned);
    const record = await this.#record(ref, request, toolset.id);
    const session = await this.#session(record);
    const note = await session.bind(table, bound);
    return {
      session: ref.session,
      id: record.id,
      binding: bound.id,
      tools: await session.tools(bound.id),
      ...(note === undefined ? {} : { note }),
      warnings: [...bound.warnings],
    };
  }

  async call(ref: SessionRef, request: ToolCallRequest, stop?: AbortSignal): Promise<ToolCallAnswer> {
    this.#open();
    const session = (await this.#liveSession(ref)) ?? (await this.#session(await this.#existing(ref)));
    return session.call(request, stop);
  }

  async approvals(filter: SessionRef | SessionFilter): Promise<SessionApproval[]> {
    if ("session" in filter) {
      const record = await this.#existing(filter);
      return pendingApprovals(record, readSession(await this.#deps.store.readJournal(record.id, 0, Number.MAX_SAFE_INTEGER)));
    }
    const runs = await this.#deps.store.listRuns({
      needsDecision: true,
      labels: filter.labels,
      ...(filter.namespace === undefined ? {} : { namespace: filter.namespace }),
      limit: 1000,
    });
    const all: SessionApproval[] = [];
    for (const record of runs.filter((run) => isSessionId(run.id)).sort((a, b) => a.createdAt - b.createdAt)) {
      all.push(...pendingApprovals(record, readSession(await this.#deps.store.readJournal(record.id, 0, Number.MAX_SAFE_INTEGER))));
    }
    return all.sort((a, b) => a.askedAt - b.askedAt || (a.id < b.id ? -1 : 1));
  }

  async decide(ref: SessionRef, seq: number, decision: Decision, request: SessionDecisionRequest): Promise<SessionDecision> {
    this.#open();
    const record = await this.#existing(ref);
    const session = await this.#session(record, { orRequest: { seq, decision, ...(request.reason === undefined ? {} : { reason: request.reason }) } });
    if (session === undefined) return { id: `${record.id}/${seq}`, decision };
    return session.decide(seq, decision, request);
  }

  /** `Engine.approve` / `reject` of a session's call by its record id (the CLI, `POST /v1/runs/:id/calls/:seq/…`, another process's request). */
  async decideById(recordId: string, seq: number, decision: Decision, reason: string | undefined): Promise<{ readonly heldBy?: string }> {
    const record = await this.#deps.store.getRun(recordId);
    if (record === undefined) throw new EngineError("not_found", `No session ${recordId}.`);
    const session = await this.#session(record, { orRequest: { seq, decision, ...(reason === undefined ? {} : { reason }) } });
    if (session === undefined) return { heldBy: record.owner?.id ?? "another process" };
    await session.decide(seq, decision, reason === undefined ? {} : { reason });
    return {};
  }

  async blob(ref: SessionRef, handle: string, offset: number): Promise<BlobPageAnswer> {
    const record = await this.#existing(ref);
    const text = await this.#deps.blobs.get(record.id, handle);
    if (text === undefined)
      throw new EngineError("not_found", `Session ${JSON.stringify(ref.session)} has no ${handle}: a handle is read only in the session whose result made it.`);
    if (offset > text.length) throw new EngineError("invalid_request", `${handle} has ${text.length} characters; offset ${offset} is past its end.`);
    return blobPage(text, offset);
  }

  /** Closes every live session (their journals stay as they are; their leases go with the engine's). */
  async close(): Promise<void> {
    this.#closed = true;
    const live = [...this.#live.values()];
    this.#live.clear();
    for (const session of await Promise.allSettled(live)) if (session.status === "fulfilled") session.value.close();
  }

  /** The session's record, created (with `run.started`) when it has none. */
  async #record(ref: SessionRef, request: BindRequest, toolsetId: string): Promise<RunRecord> {
    const id = sessionRecordId(ref.session, ref.namespace);
    const existing = await this.#deps.store.getRun(id);
    if (existing !== undefined) return existing;
    const now = this.#deps.clock.now();
    const input = { session: ref.session };
    const started: JournalEntry = { index: 0, at: now, kind: "run.started", input, replayVersion: REPLAY_VERSION };
    const created = await this.#deps.store.createRun(
      {
        id,
        toolsetId,
        // A session runs no script: it is a journal of model tool calls.
        source: "",
        js: "",
        sourceMap: "",
        input,
        status: "waiting",
        createdAt: now,
        ...(request.labels === undefined || Object.keys(request.labels).length === 0 ? {} : { labels: request.labels }),
        ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }),
        idempotencyKey: sessionKey(ref.session),
      },
      [started],
    );
    const record = await this.#deps.store.getRun(created.kind === "created" ? id : created.runId);
    if (record === undefined) throw new Error(`session ${id} was created and cannot be read`);
    return record;
  }

  async #existing(ref: SessionRef): Promise<RunRecord> {
    const record = await this.#deps.store.getRun(sessionRecordId(ref.session, ref.namespace));
    if (record === undefined) throw new EngineError("not_found", `No session ${JSON.stringify(ref.session)}: bind tools in it first (directTools).`);
    return record;
  }

  /** The live session of `record`, opened here (holding its lease) if it is not; with `orRequest`, a session held elsewhere gets the decision as a request instead (undefined). */
  async #session(record: RunRecord): Promise<DirectSession>;
  async #session(
    record: RunRecord,
    options: { readonly orRequest: { readonly seq: number; readonly decision: Decision; readonly reason?: string } },
  ): Promise<DirectSession | undefined>;
  async #session(
    record: RunRecord,
    options?: { readonly orRequest: { readonly seq: number; readonly decision: Decision; readonly reason?: string } },
  ): Promise<DirectSession | undefined> {
    const live = this.#live.get(record.id);
    if (live !== undefined) {
      const session = await live;
      if (!session.closed) return session;
    }
    const fresh = (await this.#deps.store.getRun(record.id)) ?? record;
    if (!(await this.#deps.leases.claim(fresh))) {
      if (options !== undefined) {
        await this.#deps.store.putRunRequest(record.id, { kind: "decide", ...options.orRequest }, this.#deps.clock.now());
        return undefined;
      }
      throw new EngineError(
        "conflict",
        `Session ${JSON.stringify(sessionNameOf(record))} is live in another process (${fresh.owner?.id ?? "unknown"}): send its tool calls there, or stop that process.`,
      );
    }
    const opening = DirectSession.open(fresh, this.#deps);
    this.#live.set(record.id, opening);
    opening.catch(() => this.#live.delete(record.id));
    return opening;
  }

  /** The session, if it is live here. */
  async #liveSession(ref: SessionRef): Promise<DirectSession | undefined> {
    const live = this.#live.get(sessionRecordId(ref.session, ref.namespace));
    const session = live === undefined ? undefined : await live.catch(() => undefined);
    return session?.closed === false ? session : undefined;
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", "The engine is closed.");
  }
}

function viewOf(record: RunRecord): SessionRecordView {
  return {
    id: record.id,
    session: sessionNameOf(record),
    ...(record.namespace === undefined ? {} : { namespace: record.namespace }),
    ...(record.labels === undefined ? {} : { labels: record.labels }),
  };
}
