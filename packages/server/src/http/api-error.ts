import { EngineError, type EngineErrorCode } from "@tapedeck/engine";
import type { ApiErrorBody, ApiErrorCode, Diagnostic } from "@tapedeck/protocol/api";
import type { Permission } from "../tenancy/permission.js";

/**
 * An answer other than success, thrown by handlers and turned into `{ error: { code, message } }`
 * by the error handler. Each code has one status; messages say what to do next.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly diagnostics?: readonly Diagnostic[];
  /** With `quota_exceeded`: when to try again, seconds (the `Retry-After` header and the body's `retryAfterSeconds`). */
  readonly retryAfterSeconds?: number;

  constructor(code: ApiErrorCode, message: string, options: { diagnostics?: readonly Diagnostic[]; retryAfterSeconds?: number } = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = STATUS[code];
    if (options.diagnostics) this.diagnostics = options.diagnostics;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  body(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.diagnostics ? { diagnostics: this.diagnostics } : {}),
        ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
      },
    };
  }
}

export const STATUS: Record<ApiErrorCode, number> = {
  invalid_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  config_mismatch: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_toolset: 422,
  script_refused: 422,
  misconfigured: 422,
  quota_exceeded: 429,
  unavailable: 503,
  internal: 500,
};

/**
 * The engine's local errors as API errors. `misconfigured` (the server lacks host tool
 * implementations for a toolset) is 422: retrying the same request cannot succeed, so a 503
 * would mislead clients into retrying. `closed` is 503: the server is stopping.
 */
const FROM_ENGINE: Record<EngineErrorCode, ApiErrorCode> = {
  not_found: "not_found",
  invalid_toolset: "invalid_toolset",
  misconfigured: "misconfigured",
  closed: "unavailable",
  conflict: "conflict",
  invalid_request: "invalid_request",
  config_mismatch: "config_mismatch",
};

export function fromEngineError(error: EngineError): ApiError {
  return new ApiError(FROM_ENGINE[error.code], error.message);
}

/** The 404 of a run that does not exist — and, word for word, of one outside the caller's scope. */
export function runNotFound(id: string): ApiError {
  return new ApiError("not_found", `No run ${id}.`);
}

/** Runs `work`, turning the engine's `not_found` for this run into the one answer for a missing run. */
export async function orRunNotFound<T>(id: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof EngineError && error.code === "not_found") throw runNotFound(id);
    throw error;
  }
}

/** The 403 of what tenancy refuses (`tenancy/`), with its reason; nothing when it allows it. */
export function forbidUnless(permission: Permission): void {
  if (!permission.ok) throw new ApiError("forbidden", permission.reason);
}
