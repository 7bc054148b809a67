import type { RunError, RunErrorKind, SourcePosition, ToolFailure } from "@tapedeck/protocol";
import type { GuestError } from "../sandbox/sandbox.js";
import { codeFrame } from "../script/code-frame.js";
import { createPositionMapper, mapStack } from "../script/compile.js";

/** A run error with no position. */
export function runError(kind: RunErrorKind, message: string): RunError {
  return { kind, message };
}

const SCRIPT_FRAME = /script\.ts:(\d+)(?::(\d+))?/;

/** A failure the engine delivered to the script, as the engine recorded it. */
export interface DeliveredFailure {
  readonly tool: string;
  readonly failure: ToolFailure;
}

/**
 * Turns an error from the sandbox into the run's error, in the model's own positions: the
 * stack is mapped through the run's source map, and the first frame in the script gives the
 * position and the code frame.
 *
 * A `ToolError` is reported as the failure of a call only when the engine delivered a failure
 * for the seq the sandbox names (`delivered`), and then with what the engine delivered: a
 * script cannot make its own error pass for a tool's (or an operator's) answer. Any other
 * `ToolError` is quoted as the script's own error.
 */
export function guestErrorToRunError(
  error: GuestError,
  script: { readonly source: string; readonly sourceMap: string },
  delivered: (seq: number) => DeliveredFailure | undefined,
): RunError {
  const stack = error.stack ? mapStack(error.stack, createPositionMapper(script.sourceMap)) : undefined;
  const match = stack ? SCRIPT_FRAME.exec(stack) : null;
  const position: SourcePosition | undefined = match ? { line: Number(match[1]), column: match[2] ? Number(match[2]) : 1 } : undefined;
  const failed = error.seq === undefined ? undefined : delivered(error.seq);
  return {
    ...described(error, failed),
    ...(failed && error.seq !== undefined ? { failure: failed.failure, call: { seq: error.seq, tool: failed.tool } } : {}),
    ...(position ? { position, frame: codeFrame(script.source, position.line, position.column) } : {}),
    ...(stack ? { stack } : {}),
  };
}

function described(error: GuestError, failed: DeliveredFailure | undefined): Pick<RunError, "kind" | "name" | "message"> {
  // QuickJS failing under the script is a fault of the sandbox, said as such.
  if (error.kind === "crash") return { kind: "internal", name: error.name, message: error.message };
  if (failed) return { kind: "script", name: "ToolError", message: failed.failure.message };
  if (error.failure) {
    const { code, message } = error.failure;
    return {
      kind: "script",
      name: error.name,
      message: `The script threw a ToolError of its own (code ${JSON.stringify(code)}), not the failure of a tool call: ${JSON.stringify(message)}`,
    };
  }
  return { kind: error.kind, name: error.name, message: error.message };
}
