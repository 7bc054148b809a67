import type { JsonValue, ToolFailure } from "@tapedeck/protocol";

/**
 * How a call ended, as the script will see it: its result or its failure. Every way a call can
 * end comes to this (a tool's answer, a primitive's, a rejected decision, a policy's verdict on an
 * interruption) before it is journaled (`call.completed` / `call.failed`) and delivered.
 * `notBefore` (mock sources under a virtual clock): not delivered before this (virtual) time.
 *
 * A run "settles" (ends or parks, `ExecutionResult`); a call has an outcome.
 */
export type CallOutcome = ({ readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: ToolFailure }) & {
  readonly notBefore?: number;
};
