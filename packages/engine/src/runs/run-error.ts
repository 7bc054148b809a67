import type { RunError, RunErrorKind, SourcePosition } from "@tapedeck/protocol";
import type { GuestError } from "../sandbox/sandbox.js";
import { codeFrame } from "../script/code-frame.js";
import { createPositionMapper, mapStack } from "../script/compile.js";

/** A run error with no position. */
export function runError(kind: RunErrorKind, message: string): RunError {
  return { kind, message };
}

const SCRIPT_FRAME = /script\.ts:(\d+)(?::(\d+))?/;

/**
 * Turns an error from the sandbox into the run's error, in the model's own positions: the
 * stack is mapped through the run's source map, and the first frame in the script gives the
 * position and the code frame.
 */
export function guestErrorToRunError(
  error: GuestError,
  script: { readonly source: string; readonly sourceMap: string },
  toolOfSeq: (seq: number) => string | undefined,
): RunError {
  const stack = error.stack ? mapStack(error.stack, createPositionMapper(script.sourceMap)) : undefined;
  const match = stack ? SCRIPT_FRAME.exec(stack) : null;
  const position: SourcePosition | undefined = match ? { line: Number(match[1]), column: match[2] ? Number(match[2]) : 1 } : undefined;
  return {
    kind: error.kind,
    name: error.name,
    message: error.message,
    ...(error.failure ? { failure: error.failure } : {}),
    ...(error.failure && error.seq !== undefined ? { call: { seq: error.seq, tool: toolOfSeq(error.seq) ?? "" } } : {}),
    ...(position ? { position, frame: codeFrame(script.source, position.line, position.column) } : {}),
    ...(stack ? { stack } : {}),
  };
}

