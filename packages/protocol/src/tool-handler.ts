/**
 * A host tool implemented by a function in the harness, as the SDK's worker calls it (a task it
 * polled) and as an embedded engine does (`Tapedeck.embedded({ hostTools })`): what it gets
 * besides its arguments, and what it answers. The same functions serve either way.
 */

/** What a host tool gets besides its arguments. */
export interface ToolContext {
  /** `group.name`. */
  readonly tool: string;
  /** `{run_id}/{seq}`, the same on every attempt: pass it on (an `Idempotency-Key` header) so an effect is not repeated when a call is sent again. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly seq: number;
  /** 1, then 2, 3… when an earlier attempt was interrupted (a worker died, a lease lapsed). */
  readonly attempt: number;
  /** W3C trace context of the call, the same on every attempt. */
  readonly traceparent: string;
  /**
   * Aborted when the work is no longer wanted: the run was cancelled or the attempt timed out
   * (`cancelled`), the lease was lost (a heartbeat came too late: another worker may get the
   * call), or the worker is stopping. `signal.reason` says which. Stop working; the answer is dropped.
   */
  readonly signal: AbortSignal;
  /** Keeps the lease now (the worker also does it on its own while the tool runs). Resolves once the server answered; aborts `signal` if the work is no longer wanted. */
  readonly heartbeat: () => Promise<void>;
}

/**
 * A host tool: resolves with its result (JSON; `undefined` is null), or throws to fail the call.
 * A thrown `ToolError`, or any error with a string `code` and `message`, keeps its code; anything
 * else fails with `tool_error`. A failure is the script's `ToolError`, never retried.
 */
export type ToolHandler = (args: never, context: ToolContext) => unknown;

/** `{ <group>: { <name>: async (args, ctx) => result } }`. */
export type WorkerTools = Readonly<Record<string, Readonly<Record<string, ToolHandler>>>>;
