/**
 * One log line per request, at `info`, when its answer has been sent: method, route, path,
 * status, time, the caller's key id (and at `debug`, one when it arrives). Never a body, a header, a query string or a capability
 * in a path: a route's sensitive parameters (the token of `/hooks/:token`) are shown as
 * `[redacted]`, and the path of a request that matched no route (which could be anything, a
 * mistyped webhook URL included) only by its first segment.
 */
import { LogController, type FastifyReply, type FastifyRequest } from "fastify";

/** Route parameters that are capabilities: whoever knows one can act. */
const SENSITIVE_PARAMS = new Set(["token"]);

/** Fastify's request logging, replaced by one line per answered request. */
export class RequestLog extends LogController {
  /** At debug only: a request that never answers (a held poll, a hung route) is seen arriving. */
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ method: request.method, path: loggedPath(request) }, "request received");
  }

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = {
      method: request.method,
      path: loggedPath(request),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      ...(request.caller ? { caller: request.caller.keyId } : {}),
      ...(error ? { err: error } : {}),
    };
    if (error || reply.statusCode >= 500) reply.log.error(fields, "request");
    else reply.log.info(fields, "request");
  }
}

/** The path as logged: the route's pattern with its parameters, sensitive ones redacted. */
export function loggedPath(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  if (route === undefined || request.is404) {
    const first = request.url.split("?")[0]!.split("/")[1] ?? "";
    return `/${first.slice(0, 40)}${request.url.length > first.length + 1 ? "/…" : ""}`;
  }
  const params = (request.params ?? {}) as Readonly<Record<string, unknown>>;
  return route.replaceAll(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) =>
    SENSITIVE_PARAMS.has(name) ? "[redacted]" : typeof params[name] === "string" ? encodeURIComponent(params[name]) : `:${name}`,
  );
}

/** How a request appears when pino serializes it (an error logged with it): method and logged path only. */
export function requestView(request: FastifyRequest): { readonly method: string; readonly path: string } {
  return { method: request.method, path: loggedPath(request) };
}
