import type { FastifyInstance } from "fastify";
import { checkRequest, checkResult, type CheckRequest, type CheckResult } from "@tapedeck/protocol/api";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { reachableToolset } from "../../tenancy/toolset-access.js";
import { callerOf } from "./request-caller.js";

export function checkRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CheckRequest }>(
    "/check",
    {
      schema: {
        summary: "Type-check a script against a toolset, without running it",
        description: "Answers 200 whether or not the script type-checks: `ok` says if it may run.",
        tags: ["scripts"],
        body: checkRequest,
        response: { 200: checkResult, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<CheckResult> => {
      await reachableToolset(context.store, callerOf(request), request.body.toolset);
      const checked = await context.engine().check(request.body.source, request.body.toolset);
      return { ok: checked.ok, diagnostics: checked.diagnostics };
    },
  );
}
