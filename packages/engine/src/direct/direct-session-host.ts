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
import type { DecidedWhere } from "../runs/run-scheduler.js";
import type { RunRecord } from "../store/store.js";
import { DirectSession, type SessionDeps } from "./direct-session.js";
import { blobPage } from "./fetch-blob.js";
import type { DirectSessions, SessionFilter, SessionRecordView, SessionRef } from "./direct-sessions.js";
import { isSessionId, pendingApprovals, readSession, sessionKey, sessionNameOf, sessionRecordId } from "./session-journal.js";
import { boundTableOf, sessionTableOf } from "./session-table.js";
import { BLOB_HANDLE } from "./spill.js";

/**
 * The engine's direct tool sessions (`Engine.direct`): each session's record is a run's in the
 * store (id `ses_…`, derived from the namespace and the session's name; `waiting` for ever, never
 * executed as a script), its journal a run's journal. A session is live in at most one engine at
 * a time, which holds its lease (as for a run); another process's decision on it is left as a
 * request its holder applies. Listing approvals reads journals without holding them.
 *
 * Invariants:
 * - A session outside this engine's memory is read again from its journal whole; a fault of the
 *   store drops the live session, never its journal.
 * - Memory is bounded: a live session unused for `idleMs` (the engine's clock), or the least
 *   recently used beyond `maxOpen`, is evicted — closed, its lease released — but only when that
 *   loses nothing (`DirectSession.evictable`: no request inside it, no call in flight; calls
 *   waiting for a human are in the journal). The next request reads it again from its journal,
 *   and answers as it would have. A session that cannot be evicted stays, past the cap if need be:
 *   the cap bounds memory, it never refuses a request.
 */

/** A live session unused this long is evicted (the engine's clock). */
export const SESSION_IDLE_MS = 10 * 60 * 1000;
/** At most this many sessions are kept live; beyond, the least recently used are evicted. */
export const MAX_OPEN_SESSIONS = 1000;
/** How often (real time) idle sessions are looked for between requests. */
const SWEEP_EVERY_MS = 60 * 1000;

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
  /** Eviction: the idle time and the number of live sessions it keeps to (defaults `SESSION_IDLE_MS`, `MAX_OPEN_SESSIONS`). */
  readonly eviction?: { readonly idleMs?: number; readonly maxOpen?: number };
}

/** A decision left for the process that holds a session. */
interface SessionRequest {
  readonly seq: number;
  readonly decision: Decision;
  readonly reason?: string;
}

export class DirectSessionHost implements DirectSessions {
  readonly #deps: SessionHostDeps;
  readonly #live = new Map<string, Promise<DirectSession>>();
  /** The live sessions opened, least recently used first (a use moves a session to the end). */
  readonly #opened = new Map<string, DirectSession>();
  /** Leases being released by evictions: a session is claimed again only after its release. */
  readonly #releasing = new Map<string, Promise<void>>();
  readonly #idleMs: number;
  readonly #maxOpen: number;
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(deps: Omit<SessionHostDeps, "fault">) {
    this.#deps = {
      ...deps,
      fault: (sessionId, error) => {
        this.#live.delete(sessionId);
        this.#opened.delete(sessionId);
        void this.#deps.leases.release(sessionId).catch(() => {});
        deps.onError(error);
      },
    };
    this.#idleMs = deps.eviction?.idleMs ?? SESSION_IDLE_MS;
    this.#maxOpen = deps.eviction?.maxOpen ?? MAX_OPEN_SESSIONS;
    for (const [name, value] of [
      ["idleMs", this.#idleMs],
      ["maxOpen", this.#maxOpen],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) throw new TypeError(`direct sessions: eviction.${name} must be a whole number of at least 1, not ${value}.`);
    }
    // Between requests too, so that an engine nobody calls lets its sessions go; unref'd: it keeps no process up.
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(this.#idleMs, SWEEP_EVERY_MS));
    this.#sweeper.unref();
  }

  /** How many sessions are live in this engine's memory now (evicted ones are not). */
  get openSessions(): number {
    return this.#opened.size;
  }

  async find(ref: SessionRef): Promise<SessionRecordView | undefined> {
    // A live session's name, namespace and labels never change: no read of the store per call.
    const live = await this.#liveSession(ref);
    const record = live?.record ?? (await this.#deps.store.getRun(sessionRecordId(ref.session, ref.namespace)));
    return record === undefined ? undefined : viewOf(record);
  }

  async boundToolsets(ref: SessionRef): Promise<readonly string[]> {
    const live = await this.#liveSession(ref);
    if (live !== undefined) return live.boundToolsets;
    const record = await this.#existing(ref);
    // Read from the journal, as approvals are: a binding is journaled before bind answers.
    const ledger = readSession(await this.#deps.store.readJournal(record.id, 0, Number.MAX_SAFE_INTEGER));
    return [...new Set([...ledger.tables.values()].map((table) => table.toolset))];
  }

  async bind(ref: SessionRef, request: BindRequest): Promise<BoundSession> {
    this.#open();
    const toolset = await this.#deps.toolset(request.toolset);
    const table = sessionTableOf(request);
    const bound = boundTableOf(table, toolset.pinned);
    this.#deps.checkSources(toolset.pinned);
    const record = await this.#record(ref, request, toolset.id);
    checkLabels(ref, record, request.labels);
    const session = await this.#entered(record.id, () => Promise.resolve(record));
    try {
      const note = await session.bind(table, bound);
      return {
        session: ref.session,
        id: record.id,
        binding: bound.id,
        tools: await session.tools(bound.id),
        ...(note === undefined ? {} : { note }),
        warnings: [...bound.warnings],
      };
    } finally {
      session.leave();
    }
  }

  async call(ref: SessionRef, request: ToolCallRequest, stop?: AbortSignal): Promise<ToolCallAnswer> {
    this.#open();
    const session = await this.#entered(sessionRecordId(ref.session, ref.namespace), () => this.#existing(ref));
    try {
      return await session.call(request, stop);
    } finally {
      session.leave();
    }
  }

  async approvals(filter: SessionRef | SessionFilter): Promise<SessionApproval[]> {
    if ("session" in filter) {
      const record = await this.#existing(filter);
      return pendingApprovals(record, readSession(await this.#deps.store.readJournal(record.id, 0, Number.MAX_SAFE_INTEGER)), this.#deps.clock.now());
    }
    const runs = await this.#deps.store.listRuns({
      needsDecision: true,
      labels: filter.labels,
      ...(filter.namespace === undefined ? {} : { namespace: filter.namespace }),
      limit: 1000,
    });
    const all: SessionApproval[] = [];
    for (const record of runs.filter((run) => isSessionId(run.id)).sort((a, b) => a.createdAt - b.createdAt)) {
      all.push(...pendingApprovals(record, readSession(await this.#deps.store.readJournal(record.id, 0, Number.MAX_SAFE_INTEGER)), this.#deps.clock.now()));
    }
    return all.sort((a, b) => a.askedAt - b.askedAt || (a.id < b.id ? -1 : 1));
  }

  async decide(ref: SessionRef, seq: number, decision: Decision, request: SessionDecisionRequest): Promise<SessionDecision> {
    this.#open();
    const record = await this.#existing(ref);
    const orRequest = { seq, decision, ...(request.reason === undefined ? {} : { reason: request.reason }) };
    const session = await this.#entered(record.id, () => Promise.resolve(record), { orRequest });
    if (session === undefined) return { id: `${record.id}/${seq}`, decision };
    try {
      return await session.decide(seq, decision, request);
    } finally {
      session.leave();
    }
  }

  /** `Engine.approve` / `reject` of a session's call by its record id (the CLI, `POST /v1/runs/:id/calls/:seq/…`, another process's request). */
  async decideById(recordId: string, seq: number, decision: Decision, reason: string | undefined): Promise<DecidedWhere> {
    const record = await this.#deps.store.getRun(recordId);
    if (record === undefined) throw new EngineError("not_found", `No session ${recordId}.`);
    const session = await this.#entered(record.id, () => Promise.resolve(record), {
      orRequest: { seq, decision, ...(reason === undefined ? {} : { reason }) },
    });
    if (session === undefined) return { heldBy: record.owner?.id ?? "another process" };
    try {
      await session.decide(seq, decision, reason === undefined ? {} : { reason });
      const unsent = decision === "approved" ? await session.lackingSource(seq) : undefined;
      return unsent === undefined ? {} : { unsent };
    } finally {
      session.leave();
    }
  }

  async blob(ref: SessionRef, handle: string, offset: number): Promise<BlobPageAnswer> {
    const record = await this.#existing(ref);
    // Only spilled results are read here: a session's blobs also keep sealed call arguments (`sealed-call-args.ts`).
    const text = BLOB_HANDLE.test(handle) ? await this.#deps.blobs.get(record.id, handle) : undefined;
    if (text === undefined)
      throw new EngineError("not_found", `Session ${JSON.stringify(ref.session)} has no ${handle}: a handle is read only in the session whose result made it.`);
    if (offset > text.length) throw new EngineError("invalid_request", `${handle} has ${text.length} characters; offset ${offset} is past its end.`);
    return blobPage(text, offset);
  }

  /**
   * Lets go of this engine's live sessions of `namespace` (an erasure is about to delete them):
   * each is closed and its lease released; one with a call in flight or waiting for a decision
   * only with `force` (the erasure's cancel). Resolves once their leases are released.
   */
  async releaseNamespace(namespace: string, force: boolean): Promise<void> {
    for (const [id, session] of [...this.#opened]) {
      if (session.record.namespace === namespace && (force || session.evictable)) this.#evict(id, session);
    }
    await Promise.all([...this.#releasing.values()]);
  }

  /** Closes every live session (their journals stay as they are; their leases go with the engine's). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    const live = [...this.#live.values()];
    this.#live.clear();
    this.#opened.clear();
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

  /**
   * The live session `id`, entered (`DirectSession.enter`: it is not evicted until the caller
   * leaves it), opened here from its journal (holding its lease) if it is not live; with
   * `orRequest`, a session held elsewhere gets the decision as a request instead (undefined).
   */
  async #entered(id: string, recordOf: () => Promise<RunRecord>): Promise<DirectSession>;
  async #entered(id: string, recordOf: () => Promise<RunRecord>, options: { readonly orRequest: SessionRequest }): Promise<DirectSession | undefined>;
  async #entered(id: string, recordOf: () => Promise<RunRecord>, options?: { readonly orRequest: SessionRequest }): Promise<DirectSession | undefined> {
    for (;;) {
      this.#open();
      this.#sweep(id);
      const live = this.#live.get(id);
      if (live !== undefined) {
        const session = await live;
        // Entered in the same step as it is found open: no sweep comes in between.
        if (!session.closed) return this.#enter(session);
        if (this.#live.get(id) === live) this.#live.delete(id);
        continue;
      }
      // An eviction's release of the lease must not land after this claim of it.
      await this.#releasing.get(id);
      const record = await recordOf();
      const fresh = (await this.#deps.store.getRun(id)) ?? record;
      const claimed = await this.#deps.leases.claim(fresh);
      // Another request opened it meanwhile: one live session per record.
      if (this.#live.has(id)) continue;
      if (!claimed) {
        if (options !== undefined) {
          await this.#deps.store.putRunRequest(id, { kind: "decide", ...options.orRequest }, this.#deps.clock.now());
          return undefined;
        }
        throw new EngineError(
          "conflict",
          `Session ${JSON.stringify(sessionNameOf(record))} is live in another process (${fresh.owner?.id ?? "unknown"}): send its tool calls there, or stop that process.`,
        );
      }
      const opening = DirectSession.open(fresh, this.#deps);
      this.#live.set(id, opening);
      opening.catch(() => {
        if (this.#live.get(id) === opening) this.#live.delete(id);
      });
    }
  }

  /** Enters `session` and makes it the most recently used (the LRU order is the map's); then evicts what the cap asks. */
  #enter(session: DirectSession): DirectSession {
    session.enter();
    const id = session.record.id;
    this.#opened.delete(id);
    this.#opened.set(id, session);
    this.#sweep(id);
    return session;
  }

  /** Evicts the sessions idle for `idleMs`, then the least recently used beyond `maxOpen`: only those that lose nothing, never `keep`. */
  #sweep(keep?: string): void {
    if (this.#closed) return;
    const now = this.#deps.clock.now();
    for (const [id, session] of this.#opened) {
      if (id !== keep && session.evictable && now - session.lastUsed >= this.#idleMs) this.#evict(id, session);
    }
    let over = this.#opened.size - this.#maxOpen;
    for (const [id, session] of this.#opened) {
      if (over <= 0) break;
      if (id === keep || !session.evictable) continue;
      this.#evict(id, session);
      over--;
    }
  }

  #evict(id: string, session: DirectSession): void {
    session.close();
    this.#opened.delete(id);
    this.#live.delete(id);
    const released: Promise<void> = this.#deps.leases
      .release(id)
      .catch((error: unknown) => this.#deps.onError(error))
      .finally(() => {
        if (this.#releasing.get(id) === released) this.#releasing.delete(id);
      });
    this.#releasing.set(id, released);
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

/**
 * A session's labels are fixed when it is created: they scope who may reach it and are hashed into
 * each call's identity, so changing them would either send a tool call handled before again (a new
 * identity) or move its calls out of their scope. A bind that names labels must name the session's
 * (in any order); one that names none keeps them. Refused before anything is written.
 */
function checkLabels(ref: SessionRef, record: RunRecord, given: Readonly<Record<string, string>> | undefined): void {
  if (given === undefined) return;
  const recorded = record.labels ?? {};
  const same = Object.keys(given).length === Object.keys(recorded).length && Object.entries(given).every(([key, value]) => recorded[key] === value);
  if (same) return;
  throw new EngineError(
    "conflict",
    `Session ${JSON.stringify(ref.session)} has the labels ${JSON.stringify(recorded)}, and directTools was given ${JSON.stringify(given)}: ` +
      "a session's labels are fixed when it is created (they scope it and identify its calls), so nothing was bound. " +
      "Pass the session's labels or none to keep them, or use another session for other labels.",
  );
}

function viewOf(record: RunRecord): SessionRecordView {
  return {
    id: record.id,
    session: sessionNameOf(record),
    ...(record.namespace === undefined ? {} : { namespace: record.namespace }),
    ...(record.labels === undefined ? {} : { labels: record.labels }),
  };
}
