import type { FastifyInstance } from "fastify";
import type { WebhookDeliveryRecord } from "../../store/webhook-outbox-store.js";
import {
  WebhookEventType,
  type CreatedWebhookEndpoint,
  type CreateWebhookRequest,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookEndpointList,
} from "@tapedeck/sdk";
import { checkWebhookUrl } from "../../webhooks/webhook-url.js";
import { ApiError } from "../api-error.js";
import type { Caller } from "../auth/caller.js";
import { narrow } from "../auth/scope.js";
import { errors, id, labels, namespace } from "../schemas.js";
import type { ServerContext } from "../server-context.js";
import { callerOf } from "./request-caller.js";

/** Endpoints per page of deliveries: default and most (a delivery is small: the body is not listed). */
const DELIVERIES_LIMIT = { default: 50, max: 500 } as const;
const URL_MAX = 2048;

const endpointParams = {
  type: "object",
  properties: { id: { ...id, description: "An endpoint id (`wh_…`)." } },
  required: ["id"],
  additionalProperties: false,
} as const;
const eventType = { type: "string", enum: Object.values(WebhookEventType) } as const;
const endpoint = {
  type: "object",
  properties: {
    id: { type: "string" },
    url: { type: "string" },
    events: { type: "array", items: eventType },
    namespace,
    labels,
    description: { type: "string" },
    createdAt: { type: "integer" },
  },
} as const;
const delivery = {
  type: "object",
  properties: {
    id: { type: "string" },
    eventId: { type: "string" },
    eventType,
    status: { type: "string", enum: ["pending", "delivered", "failed"] },
    attempts: {
      type: "array",
      items: {
        type: "object",
        properties: {
          attempt: { type: "integer" },
          at: { type: "integer" },
          durationMs: { type: "integer" },
          statusCode: { type: "integer" },
          error: { type: "string" },
        },
      },
    },
    nextAttemptAt: { type: "integer" },
    createdAt: { type: "integer" },
    updatedAt: { type: "integer" },
  },
} as const;

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
        body: {
          type: "object",
          properties: {
            url: { type: "string", minLength: 1, maxLength: URL_MAX },
            events: { type: "array", minItems: 1, maxItems: 20, items: eventType, description: "Default: every type." },
            namespace,
            labels,
            description: { type: "string", maxLength: 1024 },
          },
          required: ["url"],
          additionalProperties: false,
        },
        response: { 201: { ...endpoint, properties: { ...endpoint.properties, secret: { type: "string" } } }, ...errors(400, 401, 403) },
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
        response: { 200: { type: "object", properties: { endpoints: { type: "array", items: endpoint } } }, ...errors(401, 403) },
      },
    },
    (request): WebhookEndpointList => ({ endpoints: context.webhooks.list(keyCaller(callerOf(request)).scope) }),
  );

  app.delete<{ Params: { id: string } }>(
    "/webhooks/:id",
    {
      schema: {
        summary: "Delete a webhook endpoint (its pending deliveries are never sent)",
        tags: ["webhooks"],
        params: endpointParams,
        response: { 200: { type: "object", properties: { deleted: { type: "boolean" } } }, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<{ deleted: true }> => {
      if (!(await context.webhooks.delete(keyCaller(callerOf(request)).scope, request.params.id))) throw endpointNotFound(request.params.id);
      return { deleted: true };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: number; before?: string } }>(
    "/webhooks/:id/deliveries",
    {
      schema: {
        summary: "An endpoint's delivery log, newest first",
        description:
          "Each event owed to the endpoint: its attempts (time, duration, status code or error), its status, and when the next attempt is due. `next` is the `before` of the next (older) page.",
        tags: ["webhooks"],
        params: endpointParams,
        querystring: {
          type: "object",
          properties: {
            limit: { type: "integer", minimum: 1, maximum: DELIVERIES_LIMIT.max, description: `Default ${DELIVERIES_LIMIT.default}.` },
            before: { ...id, description: "A delivery id: only older ones." },
          },
          additionalProperties: false,
        },
        response: {
          200: { type: "object", properties: { deliveries: { type: "array", items: delivery }, next: { type: "string" } } },
          ...errors(400, 401, 403, 404),
        },
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
