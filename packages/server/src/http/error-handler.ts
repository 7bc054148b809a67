import { EngineError } from "@tapedeck/engine";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, fromEngineError } from "./api-error.js";
import { loggedPath } from "../logging/request-log.js";
import { BODY_LIMIT_BYTES } from "./limits.js";

/**
 * Every error a request can end with becomes `{ error: { code, message } }` with its status.
 * Bad input is always a 4xx that says what was wrong; only a fault of the server is a 5xx
 * (logged, with a message that leaks nothing).
 */
export function errorHandler() {
  return (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void => {
    const api = toApiError(error);
    // The request's own line follows with its status; this one has the fault (the path as logged: no token, no query).
    if (api.status >= 500 && api.code !== "unavailable")
      request.log.error({ err: error, method: request.method, path: loggedPath(request) }, "Tapedeck failed while answering");
    if (api.status === 401) void reply.header("www-authenticate", 'Bearer realm="tapedeck"');
    if (api.retryAfterSeconds !== undefined) void reply.header("retry-after", String(api.retryAfterSeconds));
    void reply.code(api.status).send(api.body());
  };
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof EngineError) return fromEngineError(error);
  const fastify = error as Partial<FastifyError>;
  // Fastify's schema validation: the message comes from `formatValidationErrors`.
  if (fastify.validation) return new ApiError("invalid_request", fastify.message ?? "The request is malformed.");
  switch (fastify.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("invalid_json", "The body is not valid JSON. Send a JSON document with Content-Type: application/json.");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError("invalid_json", "The body is empty but Content-Type says JSON. Send a JSON document (`{}` when there is nothing to say).");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return bodyTooLarge();
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError("unsupported_media_type", "The body must be JSON: send it with Content-Type: application/json.");
  }
  // Any other error Fastify classed as the client's (a bad Content-Length, a malformed URL).
  const status = fastify.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new ApiError("invalid_request", fastify.message ?? "The request is malformed.");
  return new ApiError("internal", "Tapedeck failed while answering; the error was logged on the server. Runs are intact.");
}

export function bodyTooLarge(): ApiError {
  return new ApiError(
    "payload_too_large",
    `The body is larger than ${BODY_LIMIT_BYTES} bytes (4 MiB), the most this server accepts. Send less (a large input belongs in a tool the script calls).`,
  );
}
