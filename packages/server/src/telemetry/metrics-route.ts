import type { FastifyInstance } from "fastify";
import { identify } from "../http/auth/caller.js";
import { ApiError } from "../http/api-error.js";
import type { ServerContext } from "../runtime/server-context.js";

/**
 * `GET /metrics`: Prometheus text format, for the operator: an unlimited API key only
 * (`Authorization: Bearer …`, which Prometheus sends with `authorization.credentials`); a
 * limited key or a token is 403, none 401. Runs by status count every tenant's.
 */
export function metricsRoute(app: FastifyInstance, context: ServerContext): void {
  app.get(
    "/metrics",
    { schema: { summary: "Prometheus metrics (an unlimited API key only)", tags: ["health"], produces: ["text/plain"] } },
    async (request, reply) => {
      const caller = await identify(request.headers, context);
      if (!caller.operator) throw new ApiError("forbidden", "Only an unlimited API key may read /metrics: they count every tenant's runs.");
      const { body, contentType } = await context.metrics.scrape();
      return reply.type(contentType).send(body);
    },
  );
}
