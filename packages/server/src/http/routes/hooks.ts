import type { FastifyInstance } from "fastify";
import type { JsonValue } from "@tapedeck/protocol";
import { EngineError } from "@tapedeck/engine";
import { hookDelivered, hookParams, type HookDelivered, type HookParams } from "@tapedeck/protocol/api";
import { ApiError } from "../api-error.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";

/**
 * Run-bound webhook URLs (`webhook(name)` in a script): `POST /hooks/<token>`. No API key: the
 * unguessable token is the capability. The JSON body (or nothing: null) becomes the signal the
 * URL was made for. Answers say nothing about the run, since the sender may be anyone.
 */
export function hookRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Params: HookParams; Body: JsonValue | undefined }>(
    "/hooks/:token",
    {
      schema: {
        summary: "Deliver a run-bound webhook",
        description: "The body becomes the signal the URL was made for. No API key: the URL is the capability.",
        tags: ["webhooks"],
        params: hookParams,
        response: { 200: hookDelivered, ...errors(400, 404, 409, 413, 415) },
      },
    },
    async (request): Promise<HookDelivered> => {
      try {
        await context.engine().deliverWebhook(request.params.token, request.body ?? null);
      } catch (error) {
        if (error instanceof EngineError && error.code === "not_found") throw new ApiError("not_found", "No webhook at this URL.");
        if (error instanceof EngineError && error.code === "conflict")
          throw new ApiError("conflict", "The run this webhook belongs to has ended; nothing was delivered.");
        throw error;
      }
      return { delivered: true };
    },
  );
}
