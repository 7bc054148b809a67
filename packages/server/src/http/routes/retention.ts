import type { FastifyInstance } from "fastify";
import { purgedRuns, purgeRunsRequest, type PurgedRuns, type PurgeRunsRequest } from "@tapedeck/protocol/api";
import { purgeBefore } from "../../retention/purge-before.js";
import { purgeEnded } from "../../retention/purge-ended.js";
import { ApiError } from "../api-error.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

/**
 * Retention and erasure over HTTP, for the operator (an unlimited API key) only: they reach
 * every tenant's data. See `docs/design/retention.md`.
 */
export function retentionRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: PurgeRunsRequest }>(
    "/runs/purge",
    {
      schema: {
        summary: "Purge the runs that ended before a time",
        description:
          "Deletes, whole, the runs that ended before `before` (journal, signals, events, spilled blobs, run credentials), the direct sessions unused since then, and the webhook deliveries done before it, in bounded batches. Runs not ended, and runs whose workflow caller or child has not ended, are never deleted. `dryRun` counts. An unlimited API key only.",
        tags: ["runs"],
        body: purgeRunsRequest,
        response: { 200: purgedRuns, ...errors(400, 401, 403) },
      },
    },
    async (request): Promise<PurgedRuns> => {
      if (!callerOf(request).operator) throw new ApiError("forbidden", "Only an unlimited API key may purge runs: a purge reaches every tenant's runs.");
      let before: number;
      try {
        before = purgeBefore(request.body.before, context.now());
      } catch (error) {
        throw new ApiError("invalid_request", (error as Error).message);
      }
      const { complete: _complete, ...result } = await purgeEnded(context.engine(), context.webhookOutbox, {
        before,
        ...(request.body.dryRun === undefined ? {} : { dryRun: request.body.dryRun }),
      });
      return result;
    },
  );
}
