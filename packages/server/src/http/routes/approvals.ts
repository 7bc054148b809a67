import type { FastifyInstance } from "fastify";
import {
  approvalList,
  approvalsQuery,
  callParams,
  decisionRequest,
  run,
  type ApprovalList,
  type ApprovalsQuery,
  type CallParams,
  type DecisionRequest,
  type Run,
} from "@tapedeck/protocol/api";
import { APPROVALS_LIMIT } from "../limits.js";
import { runView } from "../run-view.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { visibleRun } from "./visible-run.js";

/** Calls waiting for a decision: listed, approved, rejected. */
export function approvalRoutes(app: FastifyInstance, context: ServerContext): void {
  app.get<{ Querystring: ApprovalsQuery }>(
    "/approvals",
    {
      schema: {
        summary: "Calls waiting for a decision",
        description: "Of one run (`run`), or of every run inside the caller's scope, oldest run first.",
        tags: ["approvals"],
        querystring: approvalsQuery,
        response: { 200: approvalList, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<ApprovalList> => {
      const engine = context.engine();
      const scope = callerOf(request).scope;
      if (request.query.run !== undefined) {
        const found = await visibleRun(engine, scope, request.query.run);
        return { approvals: await engine.pendingDecisions({ runId: found.id }) };
      }
      const { namespace, labels } = scope;
      return { approvals: await engine.pendingDecisions({ ...(namespace === undefined ? {} : { namespace }), labels, limit: APPROVALS_LIMIT }) };
    },
  );

  for (const decision of ["approve", "reject"] as const) {
    app.post<{ Params: CallParams; Body: DecisionRequest | undefined }>(
      `/runs/:id/calls/:seq/${decision}`,
      {
        schema: {
          summary:
            decision === "approve"
              ? "Approve a call: it is sent (once the decision is journaled)"
              : "Reject a call: the script gets a ToolError (approval_rejected)",
          tags: ["approvals"],
          params: callParams,
          body: decisionRequest,
          response: { 200: run, ...errors(400, 401, 404, 409) },
        },
      },
      async (request): Promise<Run> => {
        const engine = context.engine();
        const found = await visibleRun(engine, callerOf(request).scope, request.params.id);
        const reason = request.body?.reason;
        const options = reason === undefined ? {} : { reason };
        if (decision === "approve") await engine.approve(found.id, request.params.seq, options);
        else await engine.reject(found.id, request.params.seq, options);
        return runView(await engine.getRun(found.id));
      },
    );
  }
}
