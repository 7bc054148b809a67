import type { RunStatus } from "@tapedeck/protocol";
import type { JournalEntry } from "@tapedeck/protocol";
import type {
  CancelRunRequest,
  Diagnostic,
  ForkRunRequest,
  JournalPage,
  Labels,
  Run,
  RunList,
  RunOutputPage,
  SignalRequest,
  SignalResult,
  StartedRun,
  StartRunRequest,
} from "@tapedeck/protocol/api";
import { TapedeckError } from "../errors.js";
import type { HttpClient } from "../http-client.js";
import { followRun, type FollowOptions } from "./run-follow.js";
import { runEvents, type RunEventsOptions, type RunStreamItem } from "./run-events.js";

/** What starting (or forking) a run gives: a run, or the type-checker's refusal. */
export type StartResult =
  /** The script type-checked and the run is executing; or (`existing`) the idempotency key named a run already, which is this one. */
  | { readonly kind: "started"; readonly run: Run; readonly warnings: readonly Diagnostic[]; readonly existing: boolean }
  /** The script did not type-check: no run was created. */
  | { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] };

export interface GetRunOptions {
  /** Hold the answer up to this many seconds (at most 60) until the run ends or parks. Default 0. */
  readonly wait?: number;
  /** With `wait`: a run parked now is held until it wakes and next ends or parks (a sleep, a workflow child). Default false. */
  readonly next?: boolean;
  readonly signal?: AbortSignal;
}

export interface ListRunsQuery {
  readonly status?: RunStatus | readonly RunStatus[];
  /** Only runs with every one of these labels. */
  readonly labels?: Labels;
  readonly namespace?: string;
  /** At most this many, newest first. Default 100, at most 500. */
  readonly limit?: number;
}

/** Runs: start, follow, steer and fork. A run outside the client's scope answers 404, as a missing one. */
export class Runs {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Type-checks the script and starts a run. A script that does not type-check is `refused`, not thrown. */
  start(request: StartRunRequest): Promise<StartResult> {
    return started(this.#http.request<StartedRun>("POST", "/v1/runs", { body: request }));
  }

  /** Forks a run with corrected code: calls that match the parent's completed calls are not made again. */
  fork(runId: string, request: ForkRunRequest): Promise<StartResult> {
    return started(this.#http.request<StartedRun>("POST", `${runPath(runId)}/fork`, { body: request }));
  }

  /** A run; with `wait`, once it ends or parks (or the wait is over). */
  get(runId: string, options: GetRunOptions = {}): Promise<Run> {
    return this.#http.request("GET", runPath(runId), {
      query: { wait: options.wait, ...(options.next ? { next: "true" } : {}) },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  async list(query: ListRunsQuery = {}): Promise<readonly Run[]> {
    const labels = Object.fromEntries(Object.entries(query.labels ?? {}).map(([key, value]) => [`label.${key}`, value]));
    const status = query.status === undefined ? undefined : typeof query.status === "string" ? [query.status] : query.status;
    const list = await this.#http.request<RunList>("GET", "/v1/runs", { query: { status, namespace: query.namespace, limit: query.limit, ...labels } });
    return list.runs;
  }

  /** A page of the run's journal, from entry `from` (default 0), at most `limit` (default 100, at most 1000). */
  journal(runId: string, options: { readonly from?: number; readonly limit?: number } = {}): Promise<JournalPage> {
    return this.#http.request("GET", `${runPath(runId)}/journal`, { query: { from: options.from, limit: options.limit } });
  }

  /** One entry of the run's journal, in full; 404 `not_found` past its end. */
  entry(runId: string, index: number): Promise<JournalEntry> {
    return this.#http.request("GET", `${runPath(runId)}/journal/${encodeURIComponent(index)}`);
  }

  /**
   * A page of a completed run's output as JSON text (2-space indented), from `offset` (default 0),
   * at most `limit` characters (default 256 KiB, at most 1 MiB). 409 `conflict` while the run
   * has no output (it has not completed).
   */
  output(runId: string, options: { readonly offset?: number; readonly limit?: number } = {}): Promise<RunOutputPage> {
    return this.#http.request("GET", `${runPath(runId)}/output`, { query: { offset: options.offset, limit: options.limit } });
  }

  /** Cancels a run that has not ended (an ended run is left as it is); answers the run. */
  cancel(runId: string, request: CancelRunRequest = {}): Promise<Run> {
    return this.#http.request("POST", `${runPath(runId)}/cancel`, { body: request });
  }

  /**
   * The run's live events (`GET /v1/runs/:id/events`, Server-Sent Events): `run` (its state, first
   * and whenever it changes), each journal `entry` in order, then `end`. Resumes by itself with
   * `Last-Event-ID` after a dropped connection or a server restart, skipping and repeating no
   * entry. Throws `TapedeckError` 404 for a run missing or outside the client's scope. Needs a
   * server on a port (an embedded client's requests cannot hold a stream).
   */
  events(runId: string, options: RunEventsOptions = {}): AsyncIterable<RunStreamItem> {
    return runEvents(this.#http, `${runPath(runId)}/events`, options);
  }

  /**
   * Follows the run through its sleeps, waits and workflow children to its end, and resolves
   * with it as it ended; `onApproval` and `onSignalWait` are told of each decision and signal it
   * (or a child it waits on) waits for. See `events`.
   */
  follow(runId: string, options: FollowOptions = {}): Promise<Run> {
    return followRun((id, eventOptions) => this.events(id, eventOptions), runId, options);
  }

  /** Sends a signal; it is kept until a `signal(name)` call of the run takes it. */
  signal(runId: string, request: SignalRequest): Promise<SignalResult> {
    return this.#http.request("POST", `${runPath(runId)}/signal`, { body: request });
  }
}

export function runPath(runId: string): string {
  return `/v1/runs/${encodeURIComponent(runId)}`;
}

async function started(request: Promise<StartedRun>): Promise<StartResult> {
  try {
    const { run, warnings, existing } = await request;
    return { kind: "started", run, warnings, existing };
  } catch (error) {
    if (TapedeckError.is(error) && error.code === "script_refused") return { kind: "refused", diagnostics: error.diagnostics ?? [] };
    throw error;
  }
}
