import type { FastifyInstance } from "fastify";
import { createTokenRequest, issuedToken, TOKEN_TTL_SECONDS, type CreateTokenRequest, type IssuedToken } from "@tapedeck/protocol/api";
import { mayActAs } from "../../tenancy/end-user-access.js";
import { narrow } from "../../tenancy/scope.js";
import { ApiError, forbidUnless } from "../api-error.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

export function tokenRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CreateTokenRequest }>(
    "/tokens",
    {
      schema: {
        summary: "Mint an end user's token",
        description:
          "A signed, expiring token limited to one namespace (and labels), for code that must act only for that end user. Only an API key can mint one, and only inside its own scope: an unlimited key, or a key limited to that namespace (a key limited only by labels acts as no end user).",
        tags: ["tokens"],
        body: createTokenRequest,
        response: { 201: issuedToken, ...errors(400, 401, 403) },
      },
    },
    async (request, reply): Promise<IssuedToken> => {
      const caller = callerOf(request);
      if (caller.kind === "token") throw new ApiError("forbidden", "A token cannot mint tokens; use an API key.");
      const placed = narrow(caller.scope, { namespace: request.body.namespace, labels: request.body.labels });
      if (!placed.ok) throw new ApiError("forbidden", placed.message);
      forbidUnless(mayActAs(caller, request.body.namespace, "minting a token"));
      const expiresAt = context.now() + (request.body.ttlSeconds ?? TOKEN_TTL_SECONDS.default) * 1000;
      const ns = request.body.namespace;
      const token = context.tokens.mint({ v: 1, ns, labels: placed.scope.labels, exp: expiresAt, key: caller.keyId });
      void reply.code(201);
      return { token, namespace: ns, labels: placed.scope.labels, expiresAt };
    },
  );
}
