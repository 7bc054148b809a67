/**
 * Host tools served by workers through the HTTP API, with scopes: a worker only ever receives
 * the calls of runs its key or token can see (their namespace and labels), and of its toolset
 * (or a toolset derived from it: saving a workflow derives one) when it names one. Built on the
 * engine's `HostTaskQueue` (the store's queue: leases, heartbeats, interruptions, polls held
 * until a task comes), whose polls and answers take what a caller may reach: the broker says
 * what a scope is in those terms.
 *
 * Invariants:
 * - A poll claims only tasks its scope and toolset see; a task id outside the caller's scope
 *   answers `lost`, exactly like a task that never existed.
 * - A call no poll takes at once is reported `waiting` with the last poll that could have taken
 *   it (its scope and toolset see the run, its tools name the call's), not any poll.
 */
import type {
  HostTask,
  HostTaskQueue,
  LeaseAnswer,
  ResumedCall,
  StagedAttempt,
  StagedCallRequest,
  ToolCallRequest,
  ToolOutcome,
  ToolSource,
} from "@tapedeck/engine";
import type { JsonValue, ToolFailure } from "@tapedeck/protocol";
import type { Scope } from "../tenancy/scope.js";

export interface BrokerPoll {
  /** The scope of the worker's key or token. */
  readonly scope: Scope;
  /** `group.name` or `group.*`. */
  readonly tools: readonly string[];
  readonly waitMs: number;
  readonly max: number;
  /** Only runs on this toolset, or on a toolset derived from it. */
  readonly toolset?: string;
  /** Ends the poll (the worker hung up, the server stops). */
  readonly signal?: AbortSignal;
}

export class HostTaskBroker implements ToolSource {
  readonly #queue: HostTaskQueue;

  constructor(queue: HostTaskQueue) {
    this.#queue = queue;
  }

  /** Host tasks queued and claimed in the store (of every node sharing it): for `/metrics`. */
  pending(): Promise<{ readonly queued: number; readonly claimed: number }> {
    return this.#queue.pending();
  }

  call(request: ToolCallRequest): Promise<ToolOutcome> {
    return this.#queue.call(request);
  }

  resumes(call: ResumedCall): Promise<boolean> {
    return this.#queue.resumes(call);
  }

  stage(request: StagedCallRequest): StagedAttempt | undefined {
    return this.#queue.stage(request);
  }

  /** Claims up to `max` tasks the poll may see: at once if some wait, else when one arrives, or none after `waitMs`. Never rejects. */
  poll(poll: BrokerPoll): Promise<HostTask[]> {
    return this.#queue.poll({
      tools: poll.tools,
      waitMs: poll.waitMs,
      max: poll.max,
      ...reach(poll.scope),
      ...(poll.toolset === undefined ? {} : { toolset: poll.toolset }),
      ...(poll.signal === undefined ? {} : { signal: poll.signal }),
    });
  }

  /** Extends the lease. `lost` for a task outside the scope, as for one that does not exist. */
  heartbeat(scope: Scope, taskId: string, lease: string): Promise<LeaseAnswer> {
    return this.#queue.heartbeat(taskId, lease, reach(scope));
  }

  complete(scope: Scope, taskId: string, lease: string, value: JsonValue): Promise<LeaseAnswer> {
    return this.#queue.complete(taskId, lease, value, reach(scope));
  }

  fail(scope: Scope, taskId: string, lease: string, failure: ToolFailure): Promise<LeaseAnswer> {
    return this.#queue.fail(taskId, lease, failure, reach(scope));
  }

  /** Ends every poll (empty) and stops waiting for the calls of this process (their tasks stay for the next server). */
  close(): Promise<void> {
    return this.#queue.close();
  }
}

/** The runs a scope reaches, as the queue filters tasks. */
function reach(scope: Scope): { readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> } {
  return {
    ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
    ...(Object.keys(scope.labels).length === 0 ? {} : { labels: scope.labels }),
  };
}
