import type { Diagnostic } from "../diagnostic.js";
import { diagnostic } from "./diagnostic.js";
import { schemaFor } from "./schema-for.js";

/** Codes of the API's errors. Each has one HTTP status. */
export const ApiErrorCode = {
  /** 400: the request is malformed (a field, a query parameter); the message names it. */
  invalid_request: "invalid_request",
  /** 400: the body is not JSON. */
  invalid_json: "invalid_json",
  /** 401: no key or token, or one that is unknown, forged or expired. */
  unauthorized: "unauthorized",
  /** 403: the key or token may not do this (mint tokens, act outside its namespace or labels). */
  forbidden: "forbidden",
  /** 404: no such run, toolset, route or webhook (or one outside the caller's scope: the same answer). */
  not_found: "not_found",
  /** 409: the request does not fit the run's state (it has ended; the call is not waiting for a decision). */
  conflict: "conflict",
  /** 409: a direct tool call waiting for approval was decided or answered under another tool table than it was asked under; nothing was written. */
  config_mismatch: "config_mismatch",
  /** 413: the body is larger than the server accepts. */
  payload_too_large: "payload_too_large",
  /** 415: the body is not `application/json`. */
  unsupported_media_type: "unsupported_media_type",
  /** 422: the toolset cannot be registered; the message says where and what to do. */
  invalid_toolset: "invalid_toolset",
  /** 422: the script did not type-check; `diagnostics` says where. */
  script_refused: "script_refused",
  /** 422: the server cannot run this toolset (it has host tools and no implementation of them). */
  misconfigured: "misconfigured",
  /** 429: a quota of the namespace or the key (runs at once, runs started per minute or day) is used up; `Retry-After` and `retryAfterSeconds` say when to try again. */
  quota_exceeded: "quota_exceeded",
  /** 503: the server is starting or stopping. */
  unavailable: "unavailable",
  /** 500: a fault of the server; it was logged. */
  internal: "internal",
} as const;
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** Every error the API answers has this body. */
export interface ApiErrorBody {
  readonly error: {
    readonly code: ApiErrorCode;
    readonly message: string;
    /** With `script_refused`: the type-checker's diagnostics. */
    readonly diagnostics?: readonly Diagnostic[];
    /** With `quota_exceeded`: seconds until a start may succeed (also the `Retry-After` header). */
    readonly retryAfterSeconds?: number;
  };
}

export const errorBody = schemaFor<ApiErrorBody>()({
  type: "object",
  properties: {
    error: {
      type: "object",
      properties: {
        code: { type: "string", enum: Object.values(ApiErrorCode) },
        message: { type: "string" },
        diagnostics: { type: "array", items: diagnostic },
        retryAfterSeconds: { type: "integer", minimum: 0 },
      },
      required: ["code", "message"],
    },
  },
  required: ["error"],
});
