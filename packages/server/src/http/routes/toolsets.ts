import type { FastifyInstance } from "fastify";
import type { CreateToolsetRequest, Declarations, RegisteredToolset, ToolsetInfo } from "@tapedeck/sdk";
import { checkToolsetPermission } from "../auth/toolset-permission.js";
import { declarations, errors, id } from "../schemas.js";
import type { ServerContext } from "../server-context.js";
import { callerOf } from "./request-caller.js";

const toolsetParams = { type: "object", properties: { id: { ...id, description: "A toolset id (`ts_…`)." } }, required: ["id"], additionalProperties: false } as const;

/** Toolsets are content-addressed and hold no secrets: any caller may read any toolset by its id. */
export function toolsetRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CreateToolsetRequest }>(
    "/toolsets",
    {
      schema: {
        summary: "Register a toolset",
        description: "The body is a toolset file (see the README): MCP servers, host tools, policies, the `http` built-in. Registering connects to the MCP servers and pins their tools; the same toolset always gets the same id.",
        tags: ["toolsets"],
        body: {
          type: "object",
          properties: {
            mcpServers: { type: "object", description: "MCP servers by group." },
            hostTools: { type: "object", description: "Host tools by group, then name." },
            policies: { type: "object", description: "Policies by `group.name` or `group.*`." },
            http: { type: "object", description: "The `http` built-in: `{ \"allow\": [host patterns] }`; scripts then have `fetch`." },
          },
          additionalProperties: false,
        },
        response: { 200: { type: "object", properties: { id: { type: "string" }, declarations, warnings: { type: "array", items: { type: "string" } } } }, ...errors(400, 401, 403, 422) },
      },
    },
    async (request): Promise<RegisteredToolset> => {
      checkToolsetPermission(callerOf(request), request.body);
      const registered = await context.engine().registerToolset(request.body);
      return { id: registered.id, declarations: registered.declarations, warnings: registered.warnings ?? [] };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/toolsets/:id",
    { schema: { summary: "A toolset: its pinned tools and declarations", tags: ["toolsets"], params: toolsetParams, response: { 200: { type: "object", properties: { id: { type: "string" }, toolset: { type: "object" }, declarations } }, ...errors(401, 404) } } },
    async (request): Promise<ToolsetInfo> => {
      const found = await context.engine().toolset(request.params.id);
      return { id: found.id, toolset: found.toolset, declarations: found.declarations };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/toolsets/:id/declarations",
    { schema: { summary: "A toolset's declarations (refreshed as observed result types improve)", tags: ["toolsets"], params: toolsetParams, response: { 200: declarations, ...errors(401, 404) } } },
    async (request): Promise<Declarations> => (await context.engine().toolset(request.params.id)).declarations,
  );
}
