import type { JsonValue, ParkReason, PinnedTool, ToolFailure, ToolLogLine } from "@tapedeck/protocol";
import type { KnownSecret } from "../secrets/leak-scanner.js";
import type { StagedHostTask } from "../store/host-task-store.js";
import type { SubCallJournal } from "./sub-call-journal.js";

/**
 * The tool source seam: where the dispatcher sends a call once it is durable in the journal.
 * Host tools, MCP servers and the built-in `http` tool each implement it. A source never retries by itself:
 * it reports an interruption and the dispatcher applies the tool's policy.
 */
export interface ToolSource {
  /** Sends one attempt of a call. Never rejects: every way it can end is an outcome. */
  call(request: ToolCallRequest): Promise<ToolOutcome>;
  /**
   * Why this source cannot serve some of `tools` (the tools of a toolset whose run is about to
   * start), in words for whoever configures the engine; undefined when it can. Optional: a source
   * that cannot tell beforehand (a queue for remote workers) has none.
   */
  check?(tools: readonly PinnedTool[]): string | undefined;
  /**
   * Asked by a resumed run before it applies the tool's `onInterruption` policy to a call whose
   * attempt `attempt` a stopped engine had sent: whether that attempt still stands in this
   * source (a host task still queued for a worker, held by one, or answered). `true`: the run
   * sends the same attempt again and the source picks it up where it stands; `false`: the
   * attempt was lost with the engine, an interruption. `undefined` (and a source without this
   * method) says the same at once: the source keeps nothing across engines.
   */
  resumes?(call: ResumedCall): Promise<boolean> | undefined;
  /**
   * Asked while a call's `call.scheduled` entry is being journaled, for a source that keeps its
   * calls in the store (the host task queue): the first attempt's write, for the journal to make
   * in the same commit (`RunPatch.hostTasks`), so the call costs no commit of its own. The
   * `call` that follows (once that commit is durable) picks the staged attempt up without
   * writing it. `undefined`: nothing to stage, `call` writes what it needs. `drop` is called
   * instead of `call` when the attempt will not be sent (the append failed, the run stopped).
   */
  stage?(request: StagedCallRequest): StagedAttempt | undefined;
  /** Closes connections. */
  close?(): Promise<void>;
}

const SUSPENDED = Symbol.for("dev.tapedeck/execution-suspended");

/**
 * What an attempt's signal aborts with when its run stops executing in this process but stays
 * `running`, to be resumed (the engine stops or faults), rather than no longer wanting the call:
 * a source that keeps calls durably (the host task queue) keeps this one for the resumed run.
 */
export function executionSuspended(why: string): Error {
  return Object.assign(new Error(why), { [SUSPENDED]: true });
}

/** Whether an abort reason is `executionSuspended`'s. */
export function isSuspension(reason: unknown): boolean {
  return typeof reason === "object" && reason !== null && (reason as { [SUSPENDED]?: unknown })[SUSPENDED] === true;
}

/** A call a resumed run finds sent by a stopped engine: its tool, and the attempt the journal last recorded. */
export interface ResumedCall {
  readonly tool: PinnedTool;
  readonly runId: string;
  readonly seq: number;
  /** `{run_id}/{seq}`, as its attempts were sent. */
  readonly idempotencyKey: string;
  readonly attempt: number;
}

/** An attempt to stage: what its `ToolCallRequest` will say (attempt 1), known when the call is scheduled. */
export type StagedCallRequest = Pick<ToolCallRequest, "tool" | "args" | "runId" | "seq" | "idempotencyKey" | "attempt" | "traceparent">;

/** What a source staged for an attempt: the task the journal's append writes (see `ToolSource.stage`). */
export interface StagedAttempt {
  readonly task: StagedHostTask;
  /** The attempt will not be sent: forget it (its task was not written, or is the run's to give up). */
  readonly drop: () => void;
}

/** Why a call is held back, in words for the harness (and the model). */
export interface Park {
  readonly reason: ParkReason;
  readonly message: string;
  /** `credentials.expired`: the credential it waits for (setting that one sends the call again). */
  readonly credential?: string;
}

export interface ToolCallRequest {
  readonly tool: PinnedTool;
  readonly args: JsonValue;
  readonly runId: string;
  readonly seq: number;
  /** `{run_id}/{seq}`: the same on every attempt. */
  readonly idempotencyKey: string;
  /** 1 for the first send, then 2, 3, … after interruptions. */
  readonly attempt: number;
  /** W3C trace context of the call, the same on every attempt. */
  readonly traceparent: string;
  /** Aborted when the attempt times out or the run no longer wants the result. */
  readonly signal: AbortSignal;
  /**
   * The harness approved this call after it was parked with `tool.schema_changed`: it goes as
   * it is, and the source does not check its tool against the server's current list again.
   */
  readonly schemaChangeApproved?: boolean;
  /** Told whether a worker has taken the attempt, by sources that queue calls for workers (host tools). */
  readonly queue?: QueueWatcher;
  /**
   * `http.fetch` only: checks every URL the request would go to, the first and each redirect's,
   * with the method it would be sent with, before it is resolved or sent (a user tool's grant:
   * host, path prefix, method). A reason refuses that hop: nothing is sent to it. Set by callers
   * narrower than the toolset's allow-list; the dispatcher sets none.
   */
  readonly targetCheck?: (url: string, method: string) => string | undefined;
  /**
   * Where a source that makes host calls of its own while serving the call (a user tool's
   * `fetch`, its invocations) records each, keyed `{idempotencyKey}.{n}`, and finds them again
   * on a later attempt: the run's journal (`call.sub` entries). Set by the call intake.
   */
  readonly subCalls?: SubCallJournal;
  /**
   * The user tools whose calls this call is made within (`group.name`, outermost first) when a
   * user tool invoked it: how deep user tools nest, so that a cycle among them ends at
   * `MAX_USER_TOOL_NESTING`. Set by the user tool source on its invocations.
   */
  readonly invokedBy?: readonly string[];
  /**
   * `http.fetch` only: the user tool whose `fetch` this request is (set by the user tool source),
   * for the credential resolver: a credential of a base toolset goes only to a use of it the
   * base's own tools had (`secrets/derived-credential-use.ts`). Absent: a script's fetch.
   */
  readonly fetchOf?: PinnedTool;
  /**
   * The call's sensitive argument values (`sensitiveParams`), for a source that records host
   * calls of its own (`subCalls`): it redacts them from what it records and from the answers
   * it hands on, as the dispatcher redacts them from the call's result. Set by the dispatcher,
   * and by the user tool source on its invocations (the invoked tool's own).
   */
  readonly secrets?: readonly KnownSecret[];
}

/**
 * How a host tool's attempt stands while it is queued for workers. Waiting for a worker is not
 * part of the attempt: its timeout starts at `taken`. A source that queues calls says `waiting`
 * when no worker takes the attempt at once, and `taken` when one does; one that hands the call
 * over at once (host tools in this process) says `taken` first thing.
 */
export interface QueueWatcher {
  /** Queued, and no worker took it at once; `lastPollAt`: when a worker that could take it last polled (or when the source began to watch). */
  waiting(lastPollAt: number): void;
  /** A worker took it (claimed it with a lease): the call is sent. */
  taken(): void;
}

/**
 * How an attempt ended. `logs` (user tools): what the tool logged while answering, bounded by its
 * limits; the dispatcher leak-scans them and the call's outcome entry carries them.
 * `notBefore` (mock sources under a virtual clock): the outcome reaches
 * the script only once the clock is at this time, so a mock's delay costs no real time.
 */
export type ToolOutcome =
  /** The tool answered with a result. */
  (
    | { readonly kind: "result"; readonly value: JsonValue; readonly notBefore?: number; readonly logs?: readonly ToolLogLine[] }
    /** The tool answered with a failure; the script gets a `ToolError`. Never retried. */
    | { readonly kind: "failure"; readonly failure: ToolFailure; readonly notBefore?: number; readonly logs?: readonly ToolLogLine[] }
    /** The call did not get an answer (connection dropped, worker lost); the policy decides. */
    | { readonly kind: "interrupted"; readonly reason: string }
    /**
     * The call could not be made as things stand, and the harness can change that: the server
     * refused the credential the source sent (`credentials.expired`), or the tool changed on its
     * server since the run's toolset was pinned (`tool.schema_changed`, found before sending). The
     * call is parked; once the credential is renewed (or the harness approves it) it is sent again
     * with the same idempotency key. Only when the tool certainly did nothing (a 401, not sent).
     */
    | { readonly kind: "park"; readonly park: Park }
  ) & {
    /**
     * Secret values this attempt sent (a credential the source injected): the dispatcher's leak
     * scanner redacts them from the outcome, on top of what it already knows.
     */
    readonly secrets?: readonly KnownSecret[];
  };
