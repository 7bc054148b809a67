import type { FastifyInstance } from "fastify";
import {
  erasedNamespace,
  eraseNamespaceParams,
  eraseNamespaceQuery,
  type ErasedNamespace,
  type EraseNamespaceParams,
  type EraseNamespaceQuery,
} from "@tapedeck/protocol/api";
import type { Caller } from "../auth/caller.js";
import { eraseNamespace } from "../../retention/erase-namespace.js";
import { ApiError } from "../api-error.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

/**
 * An end user's erasure over HTTP. Allowed to the operator (an unlimited API key) and to an API
 * key limited to exactly that namespace and no labels (the application acting for that end
 * user): a label-limited key sees only part of a namespace, and a token is the end user's own
 * code, so neither may delete all of it. See `docs/design/retention.md`.
 */
export function namespaceRoutes(app: FastifyInstance, context: ServerContext): void {
  app.delete<{ Params: EraseNamespaceParams; Querystring: EraseNamespaceQuery }>(
    "/namespaces/:namespace",
    {
      schema: {
        summary: "Erase an end user",
        description:
          "Deletes everything of the namespace: its runs and direct sessions whole (journal, signals, events, blobs, sealed arguments, host tasks, run credentials), its namespace credentials, rate-limit windows, schedules, library workspace and memory documents, the webhook deliveries of its events and its webhook endpoints, in bounded batches; then compacts the SQLite files so the bytes are gone. Refused (409, nothing deleted) while a run of it has not ended, unless `cancel=true`, which cancels them first. `dryRun=true` counts. An unlimited API key, or a key limited to exactly this namespace without labels.",
        tags: ["namespaces"],
        params: eraseNamespaceParams,
        querystring: eraseNamespaceQuery,
        response: { 200: erasedNamespace, ...errors(400, 401, 403, 409) },
      },
    },
    async (request): Promise<ErasedNamespace> => {
      const { namespace } = request.params;
      const refused = mayErase(callerOf(request), namespace);
      if (refused !== undefined) throw new ApiError("forbidden", refused);
      return eraseNamespace(context.engine(), context.webhookOutbox, namespace, {
        ...(request.query.cancel === undefined ? {} : { cancel: request.query.cancel }),
        ...(request.query.dryRun === undefined ? {} : { dryRun: request.query.dryRun }),
      });
    },
  );
}

/** Why `caller` may not erase `namespace`, or undefined when it may. */
function mayErase(caller: Caller, namespace: string): string | undefined {
  if (caller.operator) return undefined;
  if (caller.kind === "token") return "An end user's token cannot erase a namespace: use an unlimited API key, or a key limited to exactly that namespace.";
  const labels = Object.keys(caller.scope.labels);
  if (caller.endUser === namespace && labels.length === 0) return undefined;
  const limit =
    caller.endUser === undefined
      ? "is limited to labels, not to a namespace"
      : caller.endUser !== namespace
        ? `is limited to namespace ${JSON.stringify(caller.endUser)}`
        : `is limited to labels (${labels.join(", ")}) within it, so it sees only part of it`;
  return `This key ${limit}: erasing ${JSON.stringify(namespace)} takes an unlimited API key, or a key limited to exactly that namespace without labels (tapedeck keys create --namespace ${JSON.stringify(namespace)}).`;
}
