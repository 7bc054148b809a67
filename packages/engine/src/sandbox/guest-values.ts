import { valueProblem } from "../util/value-bounds.js";
import type { GuestError, IssuedCall, ScriptEnd, Step } from "./sandbox.js";

/**
 * The worker's own check of what a script hands over in a step, before it leaves the worker
 * (posting it clones it recursively) and reaches the engine (which stringifies and canonicalises
 * it). The prelude refuses the same things inside the sandbox, where the script gets a clear
 * error at the line that made them; this is the host's side of that boundary, which holds even if
 * the prelude were got round. Invariants:
 * - a call whose arguments are too deep or not canonical JSON is not handed over: the script
 *   ends there with a `TypeError`, and the calls it issued after it are dropped too (seq order);
 * - an output too deep ends the script with an `output` error;
 * - an error's texts are cut to `MAX_ERROR_CHARS`, and its failure's `details` dropped if too deep.
 */

/** Longest message or stack of an error kept: a model reads it, and it is journaled. */
export const MAX_ERROR_CHARS = 16 * 1024;

export function boundStep(step: Step): Step {
  for (let i = 0; i < step.calls.length; i++) {
    const call = step.calls[i]!;
    const problem = valueProblem(call.args, { refuseLoneSurrogates: true });
    if (problem === undefined) continue;
    const calls: IssuedCall[] = step.calls.slice(0, i);
    return {
      calls,
      logs: step.logs,
      end: { ok: false, error: { kind: "script", name: "TypeError", message: `${call.tool}: the arguments are refused: ${problem}.` } },
    };
  }
  return step.end === undefined ? step : { ...step, end: boundEnd(step.end) };
}

function boundEnd(end: ScriptEnd): ScriptEnd {
  if (end.ok) {
    const problem = valueProblem(end.output);
    return problem === undefined ? end : { ok: false, error: { kind: "output", name: "TypeError", message: `The script's output is refused: ${problem}.` } };
  }
  return { ok: false, error: boundError(end.error) };
}

function boundError(error: GuestError): GuestError {
  const message = cut(error.message);
  const stack = error.stack === undefined ? undefined : cut(error.stack);
  let failure = error.failure;
  if (failure !== undefined) {
    const { details, ...rest } = failure;
    const keep = details !== undefined && valueProblem(details) === undefined;
    failure = { ...rest, code: cut(rest.code), message: cut(rest.message), ...(keep ? { details } : {}) };
  }
  return { ...error, message, ...(stack === undefined ? {} : { stack }), ...(failure === undefined ? {} : { failure }) };
}

function cut(text: string): string {
  if (typeof text !== "string") return String(text);
  return text.length <= MAX_ERROR_CHARS ? text : `${text.slice(0, MAX_ERROR_CHARS)}… [cut: ${text.length - MAX_ERROR_CHARS} more characters]`;
}
