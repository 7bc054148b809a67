import type { FastifyInstance } from "fastify";
import type { WebhookDeliveryRecord } from "../../store/webhook-outbox-store.js";
import {
  createdWebhookEndpoint,
  createWebhookRequest,
  deleted,
  DELIVERIES_LIMIT,
  deliveriesQuery,
  webhookDeliveryList,
  webhookEndpointList,
  webhookEndpointParams,
  type CreatedWebhookEndpoint,
  type CreateWebhookRequest,
  type Deleted,
  type DeliveriesQuery,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookEndpointList,
  type WebhookEndpointParams,
} from "@tapedeck/protocol/api";
import { checkWebhookUrl } from "../../webhooks/webhook-url.js";
import { ApiError } from "../api-error.js";
import type { Caller } from "../auth/caller.js";
import { narrow } from "../../tenancy/scope.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

/**
 * Webhook endpoints (events out) and their delivery log. Managed with API keys: an end user's
 * token cannot (it is handed to end-user code; webhooks are the harness's). An endpoint belongs
 * to the caller's scope, narrowed by `namespace` and `labels`: it gets the events of the runs in
 * it only, and a caller sees the endpoints inside its own scope only (others answer 404).
 */
export function webhookRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CreateWebhookRequest }>(
    "/webhooks",
    {
      schema: {
        summary: "Register a webhook endpoint",
        description:
          "Events are POSTed as JSON, signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 with the secret returned here, shown once), and retried with exponential backoff until a 2xx (8 attempts over about 10 hours).",
        tags: ["webhooks"],
        body: createWebhookRequest,
        response: { 201: createdWebhookEndpoint, ...errors(400, 401, 403) },
      },
    },
    async (request, reply): Promise<CreatedWebhookEndpoint> => {
      const caller = keyCaller(callerOf(request));
      const placed = narrow(caller.scope, { namespace: request.body.namespace, labels: request.body.labels });
      if (!placed.ok) throw new ApiError("forbidden", placed.message);
      const url = checkWebhookUrl(request.body.url, { allowPrivate: caller.operator });
      if (!url.ok) throw new ApiError("invalid_request", `body.${url.message}`);
      const { events, description } = request.body;
      const created = await context.webhooks.create(
        {
          url: url.url,
          scope: placed.scope,
          anyAddress: caller.operator,
          ...(events === undefined ? {} : { events }),
          ...(description === undefined ? {} : { description }),
        },
        context.now(),
      );
      void reply.code(201);
      return { ...created.endpoint, secret: created.secret };
    },
  );

  app.get(
    "/webhooks",
    {
      schema: {
        summary: "The webhook endpoints in the caller's scope, oldest first",
        tags: ["webhooks"],
        response: { 200: webhookEndpointList, ...errors(401, 403) },
      },
    },
    (request): WebhookEndpointList => ({ endpoints: context.webhooks.list(keyCaller(callerOf(request)).scope) }),
  );

  app.delete<{ Params: WebhookEndpointParams }>(
    "/webhooks/:id",
    {
      schema: {
        summary: "Delete a webhook endpoint (its pending deliveries are never sent)",
        tags: ["webhooks"],
        params: webhookEndpointParams,
        response: { 200: deleted, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<Deleted> => {
      if (!(await context.webhooks.delete(keyCaller(callerOf(request)).scope, request.params.id))) throw endpointNotFound(request.params.id);
      return { deleted: true };
    },
  );

  app.get<{ Params: WebhookEndpointParams; Querystring: DeliveriesQuery }>(
    "/webhooks/:id/deliveries",
    {
      schema: {
        summary: "An endpoint's delivery log, newest first",
        description:
          "Each event owed to the endpoint: its attempts (time, duration, status code or error), its status, and when the next attempt is due. `next` is the `before` of the next (older) page.",
        tags: ["webhooks"],
        params: webhookEndpointParams,
        querystring: deliveriesQuery,
        response: { 200: webhookDeliveryList, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<WebhookDeliveryList> => {
      if (!context.webhooks.has(keyCaller(callerOf(request)).scope, request.params.id)) throw endpointNotFound(request.params.id);
      const limit = request.query.limit ?? DELIVERIES_LIMIT.default;
      const records = await context.webhookOutbox.listDeliveries(request.params.id, {
        limit,
        ...(request.query.before === undefined ? {} : { before: request.query.before }),
      });
      const last = records.at(-1);
      return { deliveries: records.map(deliveryView), ...(records.length === limit && last ? { next: last.id } : {}) };
    },
  );
}

/** The caller, if it holds an API key. */
function keyCaller(caller: Caller): Caller {
  if (caller.kind === "token") throw new ApiError("forbidden", "Webhook endpoints are managed with an API key, not an end user's token.");
  return caller;
}

function endpointNotFound(id: string): ApiError {
  return new ApiError("not_found", `No webhook endpoint ${id}.`);
}

function deliveryView(record: WebhookDeliveryRecord): WebhookDelivery {
  return {
    id: record.id,
    eventId: record.eventId,
    // Written by the outbox from a `WebhookEventType`.
    eventType: record.eventType as WebhookDelivery["eventType"],
    status: record.status,
    attempts: record.attempts,
    ...(record.nextAttemptAt === undefined ? {} : { nextAttemptAt: record.nextAttemptAt }),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
