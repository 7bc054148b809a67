/**
 * Local errors: misuse of the engine's API and faults of the host, thrown as classes with a
 * stable `code`. (Failures of tool calls are data, `ToolFailure`, not these.) Recognised by a
 * brand, not by prototype (like `ToolError`): an `EngineError` made by another copy of this
 * package (two installs, a bundled CLI) is an `EngineError` too.
 */
export const EngineErrorCode = {
  /** No run, toolset or other object with that id. */
  not_found: "not_found",
  /** A toolset file or spec is invalid. */
  invalid_toolset: "invalid_toolset",
  /** The engine is missing something a run needs (a host tool implementation, a source). */
  misconfigured: "misconfigured",
  /** The engine was closed. */
  closed: "closed",
  /** The request does not fit the object's state: the run has ended, the call is not waiting for a decision. */
  conflict: "conflict",
  /** An argument is malformed (a signal name, a payload that is not JSON). */
  invalid_request: "invalid_request",
  /** A direct tool call waiting for approval is decided or answered under another tool table than it was asked under (and drift was not allowed): nothing was written. */
  config_mismatch: "config_mismatch",
} as const;
export type EngineErrorCode = (typeof EngineErrorCode)[keyof typeof EngineErrorCode];

const brand = Symbol.for("dev.tapedeck/EngineError");

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "EngineError";
    Object.defineProperty(this, brand, { value: true });
  }

  /** Whether `value` is an `EngineError`, from any copy of the package. */
  static is(value: unknown): value is EngineError {
    return typeof value === "object" && value !== null && (value as { [brand]?: unknown })[brand] === true;
  }

  /** `instanceof EngineError` asks the brand (a subclass, if one is ever made, keeps the prototype check). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return this === EngineError ? EngineError.is(value) : Function.prototype[Symbol.hasInstance].call(this, value);
  }
}
