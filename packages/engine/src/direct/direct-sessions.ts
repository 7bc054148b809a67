import type { Decision } from "@tapedeck/protocol";
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

/**
 * What the server (and the embedded client) needs of the engine for direct tool mode: sessions of
 * model tool calls, each a durable journal in the store, named by the harness within a namespace.
 * `Engine.direct` implements it (`direct-session-host.ts`); the HTTP routes `/v1/sessions/…` are
 * a thin layer over it, adding only the caller's scope (a session outside it answers as missing,
 * which the routes check with `find` before anything else).
 *
 * Every method resolves once what it did is durable, and throws an `EngineError` for misuse
 * (`not_found`, `invalid_request` naming every mistake, `conflict`, `config_mismatch`). Failures
 * of tool calls are never thrown: they are `isError` results written for the model.
 */
export interface DirectSessions {
  /** The session's record, if it exists: what the caller's scope is checked against. */
  find(ref: SessionRef): Promise<SessionRecordView | undefined>;
  /** The toolsets the session's bindings bound, each once, in binding order (`not_found` without the session): what its calls may reach. */
  boundToolsets(ref: SessionRef): Promise<readonly string[]>;
  /** Binds a tool table in the session (creating the session if it has none), recording it hidden from the model. */
  bind(ref: SessionRef, request: BindRequest): Promise<BoundSession>;
  /**
   * Handles one model tool call: sent once per tool call id, its recorded result answered after
   * that. A call waiting for approval is held up to `request.wait` seconds, or until `stop` aborts.
   */
  call(ref: SessionRef, request: ToolCallRequest, stop?: AbortSignal): Promise<ToolCallAnswer>;
  /** The calls waiting for a human, oldest first: of one session, or of every session in `filter`. */
  approvals(filter: SessionRef | SessionFilter): Promise<SessionApproval[]>;
  /** Approves or rejects call `seq` of the session (`conflict` when it waits for no decision; `config_mismatch` under another binding). */
  decide(ref: SessionRef, seq: number, decision: Decision, request: SessionDecisionRequest): Promise<SessionDecision>;
  /** A page of a result the session spilled; `not_found` for a handle of another session. */
  blob(ref: SessionRef, handle: string, offset: number): Promise<BlobPageAnswer>;
}

/** A session: its name and the namespace it lives in (none: the sessions of callers without one). */
export interface SessionRef {
  readonly session: string;
  readonly namespace?: string;
}

/** Sessions in a namespace whose labels include these. */
export interface SessionFilter {
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface SessionRecordView {
  readonly id: string;
  readonly session: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
}
