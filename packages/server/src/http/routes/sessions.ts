import type { FastifyInstance } from "fastify";
import type { DirectSessions, SessionRef } from "@tapedeck/engine";
import {
  bindRequest,
  blobPageAnswer,
  blobParams,
  blobQuery,
  boundSession,
  sessionApprovalList,
  sessionCallParams,
  sessionDecision,
  sessionDecisionRequest,
  sessionParams,
  toolCallAnswer,
  toolCallRequest,
  type BindRequest,
  type BlobPageAnswer,
  type BlobParams,
  type BlobQuery,
  type BoundSession,
  type SessionApprovalList,
  type SessionCallParams,
  type SessionDecision,
  type SessionDecisionRequest,
  type SessionParams,
  type ToolCallAnswer,
  type ToolCallRequest,
} from "@tapedeck/protocol/api";
import { ApiError, forbidUnless } from "../api-error.js";
import { holdEnds } from "../hold.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { libraryLimited, mayReachLibraryData } from "../../tenancy/library-access.js";
import { narrow, sees, type Scope } from "../../tenancy/scope.js";
import { reachableToolset } from "../../tenancy/toolset-access.js";
import { callerOf } from "./request-caller.js";

/**
 * Direct tool mode over HTTP: a session binds a toolset's tools as model tools, hands each model
 * tool call to the server, lists and decides the calls waiting for a human, reads spilled
 * results. A session lives in the caller's namespace; one outside the caller's scope (another
 * namespace, labels the caller's key does not have) answers exactly as a missing one.
 */
export function sessionRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Params: SessionParams; Body: BindRequest }>(
    "/sessions/:session/bind",
    {
      schema: {
        summary: "Bind a toolset's tools as model tools in a session",
        description:
          "Creates the session if it has none, and records the tool table (toolset, approval rules, lazy loading, result budgets, error envelope) in its journal, hidden from the model. " +
          "Answers the tools for each model API, the binding id every call names, and `note` when the tools changed since the session's previous binding. " +
          "The options are checked whole: a 400 names the path of every mistake.",
        tags: ["sessions"],
        params: sessionParams,
        body: bindRequest,
        response: { 200: boundSession, ...errors(400, 401, 403, 404, 422) },
      },
    },
    async (request): Promise<BoundSession> => {
      const caller = callerOf(request);
      const scope = caller.scope;
      const engine = context.engine();
      const direct = engine.direct;
      const ref = refOf(scope, request.params.session);
      const existing = await direct.find(ref);
      if (existing !== undefined && !sees(scope, existing)) throw sessionNotFound(request.params.session);
      await reachableToolset(context.store, caller, request.body.toolset);
      if (libraryLimited(caller, ref.namespace))
        forbidUnless(mayReachLibraryData(caller, ref.namespace, [(await engine.toolset(request.body.toolset)).toolset], "binding them in a session"));
      // An existing session keeps its labels: a bind that names none names none (the caller's key's are already among them).
      if (existing !== undefined && request.body.labels === undefined) return direct.bind(ref, request.body);
      const placed = narrow(scope, { labels: request.body.labels });
      if (!placed.ok) throw new ApiError("forbidden", placed.message);
      const labels = placed.scope.labels;
      return direct.bind(ref, { ...request.body, ...(Object.keys(labels).length === 0 ? {} : { labels }) });
    },
  );

  app.post<{ Params: SessionParams; Body: ToolCallRequest }>(
    "/sessions/:session/calls",
    {
      schema: {
        summary: "Handle one model tool call",
        description:
          "Journals the call in the session before it is sent, sends it with the idempotency key `<session id>/<seq>`, and answers the result in the shape of `api` (`tool_result`, `function_call_output`, a `tool` message, or generic content). " +
          "The same `toolCallId` again answers the recorded result and sends nothing. Every failure is an `isError` result written for the model. " +
          "A call waiting for a human answers `pending` (after holding up to `wait` seconds): handle it again to get its result once decided.",
        tags: ["sessions"],
        params: sessionParams,
        body: toolCallRequest,
        response: { 200: toolCallAnswer, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply): Promise<ToolCallAnswer> => {
      const caller = callerOf(request);
      const engine = context.engine();
      const direct = engine.direct;
      const ref = await visibleSession(direct, caller.scope, request.params.session);
      // A session an operator bound and labelled for this key may hold such tools: a call is new code, as a fork is.
      if (libraryLimited(caller, ref.namespace)) {
        const toolsets = await Promise.all((await direct.boundToolsets(ref)).map(async (id) => (await engine.toolset(id)).toolset));
        forbidUnless(mayReachLibraryData(caller, ref.namespace, toolsets, "calling a tool in this session"));
      }
      return direct.call(ref, request.body, holdEnds(context, request, reply));
    },
  );

  app.get<{ Params: SessionParams }>(
    "/sessions/:session/approvals",
    {
      schema: {
        summary: "The session's calls waiting for a human",
        description: "Each with the approver's summary, the rule or risk that asked, and when it expires. Oldest first.",
        tags: ["sessions", "approvals"],
        params: sessionParams,
        response: { 200: sessionApprovalList, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<SessionApprovalList> => {
      const direct = context.engine().direct;
      const ref = await visibleSession(direct, callerOf(request).scope, request.params.session);
      return { approvals: await direct.approvals(ref) };
    },
  );

  app.get(
    "/session-approvals",
    {
      schema: {
        summary: "Calls of every session in the caller's scope waiting for a human",
        description: "Oldest first. Run approvals are at `GET /v1/approvals`.",
        tags: ["sessions", "approvals"],
        response: { 200: sessionApprovalList, ...errors(401) },
      },
    },
    async (request): Promise<SessionApprovalList> => {
      const { namespace, labels } = callerOf(request).scope;
      return { approvals: await context.engine().direct.approvals({ ...(namespace === undefined ? {} : { namespace }), labels }) };
    },
  );

  for (const decision of ["approve", "reject"] as const) {
    app.post<{ Params: SessionCallParams; Body: SessionDecisionRequest | undefined }>(
      `/sessions/:session/calls/:seq/${decision}`,
      {
        schema: {
          summary:
            decision === "approve"
              ? "Approve a session's call: it is sent once the decision is journaled"
              : "Reject a session's call: the model gets a result saying so",
          description:
            "`always` (approve): every later call of the same tool in the session is approved too (deny rules still apply). " +
            "Deciding under another binding than the call was asked under fails 409 `config_mismatch` before anything is written, unless `allowConfigDrift`.",
          tags: ["sessions", "approvals"],
          params: sessionCallParams,
          body: sessionDecisionRequest,
          response: { 200: sessionDecision, ...errors(400, 401, 404, 409) },
        },
      },
      async (request): Promise<SessionDecision> => {
        const direct = context.engine().direct;
        const ref = await visibleSession(direct, callerOf(request).scope, request.params.session);
        return direct.decide(ref, request.params.seq, decision === "approve" ? "approved" : "rejected", request.body ?? {});
      },
    );
  }

  app.get<{ Params: BlobParams; Querystring: BlobQuery }>(
    "/sessions/:session/blobs/:handle",
    {
      schema: {
        summary: "A page of a result the session spilled",
        description: "From `offset` (characters), at most 48 KiB of UTF-8; `nextOffset` when there is more. A handle of another session is not found.",
        tags: ["sessions"],
        params: blobParams,
        querystring: blobQuery,
        response: { 200: blobPageAnswer, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<BlobPageAnswer> => {
      const direct = context.engine().direct;
      const ref = await visibleSession(direct, callerOf(request).scope, request.params.session);
      return direct.blob(ref, request.params.handle, request.query.offset ?? 0);
    },
  );
}

/** A session of the caller's namespace. */
function refOf(scope: Scope, session: string): SessionRef {
  return { session, ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }) };
}

/** The session, if it exists inside the scope; else the one 404 of a missing session. */
async function visibleSession(direct: DirectSessions, scope: Scope, session: string): Promise<SessionRef> {
  const ref = refOf(scope, session);
  const found = await direct.find(ref);
  if (found === undefined || !sees(scope, found)) throw sessionNotFound(session);
  return ref;
}

function sessionNotFound(session: string): ApiError {
  return new ApiError("not_found", `No session ${JSON.stringify(session)}: bind tools in it first (POST /v1/sessions/:session/bind).`);
}
