import type { FastifyRequest } from "fastify";
import type { Caller } from "../auth/caller.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who made a `/v1` request: set by the authentication hook before any handler runs. */
    caller: Caller | null;
  }
}

/** The caller of a `/v1` request. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error(`${request.method} ${request.url}: no caller; the route is outside the authenticated /v1 scope.`);
  return request.caller;
}
