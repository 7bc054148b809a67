import type { ApiErrorCode, Diagnostic } from "@tapedeck/protocol/api";

const brand = Symbol.for("dev.tapedeck/TapedeckError");

/** Codes the client itself gives, when no answer from the server carried one. */
export type ClientErrorCode =
  /** The server could not be reached (`status` 0). */
  | "unreachable"
  /** The server (or a proxy in front of it) answered with something that is not Tapedeck's JSON. */
  | "bad_response";

/**
 * What a call to the API throws: the HTTP `status` (0 when the server was not reached) and a
 * stable `code` (see `ApiErrorCode`). Recognised with `TapedeckError.is`, a brand rather than
 * `instanceof`, so it works across bundles and realms.
 */
export class TapedeckError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode | ClientErrorCode;
  /** With `script_refused`: where the script did not type-check. */
  readonly diagnostics?: readonly Diagnostic[];
  /** With 429 `quota_exceeded`: seconds to wait before trying again (the server's `Retry-After`). */
  readonly retryAfterSeconds?: number;

  constructor(
    status: number,
    code: ApiErrorCode | ClientErrorCode,
    message: string,
    options: { diagnostics?: readonly Diagnostic[]; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TapedeckError";
    this.status = status;
    this.code = code;
    if (options.diagnostics !== undefined) this.diagnostics = options.diagnostics;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    Object.defineProperty(this, brand, { value: true });
  }

  static is(value: unknown): value is TapedeckError {
    return typeof value === "object" && value !== null && (value as { [brand]?: unknown })[brand] === true;
  }
}
