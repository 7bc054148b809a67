import type { FastifyInstance } from "fastify";
import { healthStatus as status, type HealthStatus } from "@tapedeck/protocol/api";
import type { ServerContext } from "../../runtime/server-context.js";

/** Probes for supervisors and load balancers; no API key. */
export function healthRoutes(app: FastifyInstance, context: ServerContext): void {
  app.get(
    "/health",
    { schema: { summary: "Liveness: 200 once the server is up and its engine open", tags: ["health"], response: { 200: status, 503: status } } },
    async (_request, reply) => {
      if (context.ready) return { status: "ok", ...unsafe(context) };
      return reply.code(503).send({ ...notReady(context), ...unsafe(context) });
    },
  );

  app.get(
    "/ready",
    { schema: { summary: "Readiness: 200 when the server can take requests (its store answers)", tags: ["health"], response: { 200: status, 503: status } } },
    async (_request, reply) => {
      if (!context.ready) return reply.code(503).send(notReady(context));
      try {
        // One indexed read: proves the database answers without scanning anything.
        await context.apiKeys.getByHash("");
      } catch {
        return reply.code(503).send({ status: "unavailable" });
      }
      return { status: "ok" };
    },
  );
}

/** The test-only switches the server runs with, said by every /health answer while any is on: a monitor sees a node that must not take production traffic. */
function unsafe(context: ServerContext): Pick<HealthStatus, "unsafe"> {
  return context.unsafe.length === 0 ? {} : { unsafe: context.unsafe };
}

/** Why a node that is not ready is not: stopping, its store unreachable (saying why), or still starting. */
function notReady(context: ServerContext): HealthStatus {
  if (context.stopping.aborted) return { status: "stopping" };
  const problem = context.storeProblem();
  return problem === undefined ? { status: "starting" } : { status: "unavailable", problem };
}
