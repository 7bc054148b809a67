import type { JsonValue, PinnedWorkflow } from "@tapedeck/protocol";
import type { CallOutcome } from "./call-outcome.js";
import type { RunRecord } from "../store/store.js";
import type { SchemaValidator } from "../util/schema-validator.js";

/**
 * What a run's workflow calls need of the engine: the executor keeps the calls open and
 * journals their outcomes; the engine creates, reads and signals the child runs (which may be
 * executing here, in another process, or parked in the store).
 *
 * Every method resolves with the call's outcome (a failure is an outcome, journaled) and
 * rejects only for faults of the engine (the store), which leave the run to be resumed.
 */
export interface WorkflowHost {
  /** Validates inputs, payloads and outputs against the workflows' schemas. */
  readonly schemas: SchemaValidator;
  /**
   * Creates the child run of call `seq` of `caller` and starts executing it, or, when it was
   * created before (the call is resumed after a crash), finds it: one child per call, ever.
   * Resolves with `{ id }` once the child is durable.
   */
  start(caller: RunRecord, seq: number, name: string, input: JsonValue): Promise<CallOutcome>;
  /** The outcome of `result()` once the child `childId` has ended; undefined while it has not. */
  result(callerId: string, name: string, workflow: PinnedWorkflow, childId: string): Promise<CallOutcome | undefined>;
  /** Sends `signal` to the child, once: its key is the call's (`<caller>/<seq>`), so a resumed call does not send it again. */
  signal(callerId: string, seq: number, childId: string, signal: string, payload: JsonValue): Promise<CallOutcome>;
  /** Whether the child executes in this engine now (under a virtual clock, its caller then lets it drive time). */
  executing(childId: string): boolean;
}
