import type { FastifyInstance } from "fastify";
import type { CheckRequest, CheckResult } from "@tapedeck/sdk";
import { diagnostic, errors, id } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";

export function checkRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CheckRequest }>(
    "/check",
    {
      schema: {
        summary: "Type-check a script against a toolset, without running it",
        description: "Answers 200 whether or not the script type-checks: `ok` says if it may run.",
        tags: ["scripts"],
        body: { type: "object", properties: { toolset: id, source: { type: "string" } }, required: ["toolset", "source"], additionalProperties: false },
        response: {
          200: { type: "object", properties: { ok: { type: "boolean" }, diagnostics: { type: "array", items: diagnostic } } },
          ...errors(400, 401, 404),
        },
      },
    },
    async (request): Promise<CheckResult> => {
      const checked = await context.engine().check(request.body.source, request.body.toolset);
      return { ok: checked.ok, diagnostics: checked.diagnostics };
    },
  );
}
