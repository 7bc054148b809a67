/**
 * The wire format of Tapedeck's HTTP API (`/v1`): what each route takes and answers. The
 * server's JSON Schemas validate requests against these shapes and the server types its
 * answers with them, so client and server cannot drift apart. Times are milliseconds since
 * the epoch, as in the journal.
 *
 * These types belong in @tapedeck/protocol; they live here until the protocol package takes
 * the API's types (the server imports them type-only).
 */
import type {
  DecisionWait,
  Diagnostic,
  JournalEntry,
  JsonSchema,
  JsonValue,
  PinnedToolset,
  RunError,
  RunStatus,
  RunWait,
  ToolsetSpec,
} from "@tapedeck/protocol";

/** Labels of a run, or the labels a key or token is limited to. Every key and value is a string. */
export type Labels = Readonly<Record<string, string>>;

/** One problem in a script, positioned for whoever must fix it (usually the model). */
export type { Diagnostic };

/** The declarations of a toolset's `tapedeck:tools` module. */
export interface Declarations {
  /** A `.d.ts` module, for a type-checker. */
  readonly typescript: string;
  /** One line per tool, for the model's prompt. */
  readonly prompt: string;
}

/** `POST /v1/toolsets`: the body is a `ToolsetSpec` (the toolset file of the README). */
export type CreateToolsetRequest = ToolsetSpec;

/** `POST /v1/toolsets` answers: the toolset's content address and its declarations. */
export interface RegisteredToolset {
  readonly id: string;
  readonly declarations: Declarations;
  /** Problems that did not stop the registration (an optional MCP server that could not be listed). */
  readonly warnings: readonly string[];
}

/** `GET /v1/toolsets/:id`. */
export interface ToolsetInfo {
  readonly id: string;
  /** What the toolset pins: every tool with its schemas and resolved policy. */
  readonly toolset: PinnedToolset;
  readonly declarations: Declarations;
}

/**
 * `POST /v1/toolsets/:id/workflows`: saves a workflow on the toolset `id`. The code is checked
 * against that toolset's declarations, and its default export against `input` and `output`.
 */
export interface SaveWorkflowRequest {
  /** An identifier (letters, digits, `_`; at most 64 characters): scripts call `workflows.<name>.start(input)`. Saving a name the toolset has replaces it. */
  readonly name: string;
  /** What it does, for whoever starts it. */
  readonly description: string;
  /** Its TypeScript: the default export takes the input and returns the output. */
  readonly code: string;
  /** JSON Schema of its input. */
  readonly input: JsonSchema;
  /** JSON Schema of its output. */
  readonly output: JsonSchema;
  /** Each signal it waits for (`signal(name)`), with the JSON Schema of its payload. */
  readonly signals?: { readonly [signal: string]: JsonSchema };
}

/**
 * `POST /v1/toolsets/:id/workflows` answers 201: the toolset derived from `id` that pins the
 * workflow (a new id: start scripts on it to use `workflows.<name>`), and its declarations.
 */
export interface SavedWorkflow {
  readonly id: string;
  readonly declarations: Declarations;
  /** The type-checker's warnings (errors refuse the workflow: 422 `script_refused`). */
  readonly warnings: readonly Diagnostic[];
}

/** `POST /v1/check`. */
export interface CheckRequest {
  readonly toolset: string;
  readonly source: string;
}

/** `POST /v1/check` answers 200 whether or not the script type-checks. */
export interface CheckResult {
  /** True when the script may run (`diagnostics` then holds warnings only). */
  readonly ok: boolean;
  readonly diagnostics: readonly Diagnostic[];
}

/** A run, as the API shows it. */
export interface Run {
  readonly id: string;
  /** The id of the toolset it runs against, for its whole life. */
  readonly toolset: string;
  readonly status: RunStatus;
  /** The model's TypeScript. */
  readonly source: string;
  readonly input: JsonValue;
  /** When `completed`. */
  readonly output?: JsonValue;
  /** When `failed`. */
  readonly error?: RunError;
  /** What it waits for while `waiting`; calls waiting for a decision, or for a worker (`worker`), at any time. */
  readonly waits?: readonly RunWait[];
  /** While `waiting`: when its earliest timer is due. */
  readonly wakeAt?: number;
  readonly labels: Labels;
  /** The end user the run belongs to. */
  readonly namespace?: string;
  /** The run this one was forked from. */
  readonly parent?: string;
  /** For a workflow's child run: the run that started it, and the `seq` of its `workflows.<name>.start` call. */
  readonly caller?: { readonly run: string; readonly seq: number };
  /** When the run is cancelled if it has not ended (its `ttl` passed). */
  readonly expiresAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Number of journal entries. */
  readonly journalLength: number;
  /** In a list only: the run's stored row cannot be read (why); only its id, toolset and times are its own. */
  readonly damaged?: string;
}

/** `POST /v1/runs`. */
export interface StartRunRequest {
  readonly toolset: string;
  readonly source: string;
  /** Passed to the script's default export. Default null. */
  readonly input?: JsonValue;
  /** Added to the labels of the caller's key or token (which may not be contradicted). */
  readonly labels?: Labels;
  /** The end user the run belongs to. A key or token limited to a namespace sets it itself. */
  readonly namespace?: string;
  /**
   * Names this start (1 to 200 characters): starting again with a key a run of the same
   * namespace was started (or forked) with starts nothing and answers that run (`existing`),
   * even when the two requests race. The rest of the request is not compared.
   */
  readonly idempotencyKey?: string;
  /**
   * How long the run may take: a duration ("30s", "10m", "2h", "30d") or milliseconds. A run
   * that has not ended by then is cancelled ("expired: its ttl of 30d passed"). Default: none.
   */
  readonly ttl?: string | number;
  /** W3C trace context the run's calls join (the LLM call that wrote the script). Default: a trace of the run's own. */
  readonly traceparent?: string;
}

/** `POST /v1/runs/:id/fork`: a new run with corrected code that reuses the parent's completed calls. */
export interface ForkRunRequest {
  readonly source: string;
  /** Default: the parent's input. */
  readonly input?: JsonValue;
  /** As for `POST /v1/runs`, in the parent's namespace. */
  readonly idempotencyKey?: string;
  /** As for `POST /v1/runs`. Default: the parent's ttl (measured from the fork's start). */
  readonly ttl?: string | number;
  /** As for `POST /v1/runs`. */
  readonly traceparent?: string;
}

/**
 * `POST /v1/runs` and `POST /v1/runs/:id/fork` answer 201 with the new run, or 200 with the run
 * an `idempotencyKey` named already (`existing`).
 */
export interface StartedRun {
  readonly run: Run;
  /** The type-checker's warnings (errors refuse the script: 422 `script_refused`); none for an existing run. */
  readonly warnings: readonly Diagnostic[];
  /** True when the idempotency key named a run already: nothing was started. */
  readonly existing: boolean;
}

/** `GET /v1/runs/:id/output`: a page of a completed run's output (see `outputPage` of @tapedeck/protocol). */
export type { RunOutputPage } from "@tapedeck/protocol";

/** `GET /v1/runs`. */
export interface RunList {
  /** Newest first. */
  readonly runs: readonly Run[];
}

/** `GET /v1/runs/:id/journal`. */
export interface JournalPage {
  readonly entries: readonly JournalEntry[];
  /** The `from` of the next page, when the journal has more entries. */
  readonly next?: number;
}

/** `POST /v1/test`: runs a script against mocks in virtual time (`test_script`); nothing is sent to a tool and no run is kept. */
export interface TestRequest {
  readonly toolset: string;
  readonly source: string;
  /** Passed to the script's default export. Default null. */
  readonly input?: JsonValue;
  /**
   * What the mocked world answers, and when (the scenario format of the README), or a cassette.
   * `from_run`: a run (in the caller's scope) whose recorded calls answer first. Default: no mocks.
   */
  readonly scenario?: Readonly<Record<string, unknown>>;
}

/** `POST /v1/test` answers: what the test run did (`TestReport`, `TestCall` of @tapedeck/protocol). */
export type { TestCall, TestReport } from "@tapedeck/protocol";

/** `GET /v1/toolsets/:id/search`. */
export interface ToolSearchResult {
  /** Best first; none when nothing matches. */
  readonly hits: readonly ToolSearchHit[];
}

export interface ToolSearchHit {
  /** `group.name`, as the journal names it. */
  readonly tool: string;
  /** What the script imports from `tapedeck:tools`. */
  readonly group: string;
  /** Relevance, higher is better; comparable only within one search. */
  readonly score: number;
  /** The tool's TypeScript declaration. */
  readonly declaration: string;
}

/** `POST /v1/runs/:id/cancel`. */
export interface CancelRunRequest {
  readonly reason?: string;
}

/** `POST /v1/runs/:id/signal`. */
export interface SignalRequest {
  /** The name the script waits for with `signal(name)`. */
  readonly name: string;
  /** Default null. */
  readonly payload?: JsonValue;
  /** Sending the same key twice to a run delivers the signal once. */
  readonly idempotencyKey?: string;
}

export interface SignalResult {
  readonly signalId: number;
  /** True when the key was used before: nothing was sent again. */
  readonly duplicate: boolean;
}

/** A call waiting for a decision (approval, or parked), with its run. `id` is `<run_id>/<seq>` (the call's idempotency key). */
export type PendingApproval = DecisionWait & { readonly id: string; readonly runId: string; readonly labels?: Labels; readonly namespace?: string };

/** `GET /v1/approvals`. */
export interface ApprovalList {
  /** Oldest run first. */
  readonly approvals: readonly PendingApproval[];
}

/** `POST /v1/runs/:id/calls/:seq/approve` and `/reject`. */
export interface DecisionRequest {
  readonly reason?: string;
}

/** `POST /v1/tokens`: a token for one end user, minted by an API key. */
export interface CreateTokenRequest {
  /** The end user (their id in your application). */
  readonly namespace: string;
  /** Labels the token is limited to (on top of the minting key's). */
  readonly labels?: Labels;
  /** How long the token is valid. Default 3600 (one hour); at most 30 days. */
  readonly ttlSeconds?: number;
}

export interface IssuedToken {
  /** Send it as `Authorization: Bearer <token>`. */
  readonly token: string;
  readonly namespace: string;
  readonly labels: Labels;
  readonly expiresAt: number;
}

/** Codes of the API's errors. Each has one HTTP status. */
export const ApiErrorCode = {
  /** 400: the request is malformed (a field, a query parameter); the message names it. */
  invalid_request: "invalid_request",
  /** 400: the body is not JSON. */
  invalid_json: "invalid_json",
  /** 401: no key or token, or one that is unknown, forged or expired. */
  unauthorized: "unauthorized",
  /** 403: the key or token may not do this (mint tokens, act outside its namespace or labels). */
  forbidden: "forbidden",
  /** 404: no such run, toolset, route or webhook (or one outside the caller's scope: the same answer). */
  not_found: "not_found",
  /** 409: the request does not fit the run's state (it has ended; the call is not waiting for a decision). */
  conflict: "conflict",
  /** 413: the body is larger than the server accepts. */
  payload_too_large: "payload_too_large",
  /** 415: the body is not `application/json`. */
  unsupported_media_type: "unsupported_media_type",
  /** 422: the toolset cannot be registered; the message says where and what to do. */
  invalid_toolset: "invalid_toolset",
  /** 422: the script did not type-check; `diagnostics` says where. */
  script_refused: "script_refused",
  /** 422: the server cannot run this toolset (it has host tools and no implementation of them). */
  misconfigured: "misconfigured",
  /** 503: the server is starting or stopping. */
  unavailable: "unavailable",
  /** 500: a fault of the server; it was logged. */
  internal: "internal",
} as const;
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** Every error the API answers has this body. */
export interface ApiErrorBody {
  readonly error: {
    readonly code: ApiErrorCode;
    readonly message: string;
    /** With `script_refused`: the type-checker's diagnostics. */
    readonly diagnostics?: readonly Diagnostic[];
  };
}

/** The header that narrows a request to one end user (see `Tapedeck.namespace`). */
export const NAMESPACE_HEADER = "tapedeck-namespace";
