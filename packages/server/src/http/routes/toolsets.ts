import type { FastifyInstance } from "fastify";
import { SEARCH_LIMIT } from "@tapedeck/protocol";
import {
  createToolsetRequest,
  declarations,
  registeredToolset,
  savedWorkflow,
  saveWorkflowRequest,
  savedTool,
  saveToolRequest,
  toolSearchQuery,
  toolSearchResult,
  toolsetInfo,
  toolsetParams,
  type CreateToolsetRequest,
  type Declarations,
  type RegisteredToolset,
  type SavedWorkflow,
  type SaveWorkflowRequest,
  type SavedTool,
  type SaveToolRequest,
  type ToolSearchQuery,
  type ToolSearchResult,
  type ToolsetInfo,
  type ToolsetParams,
} from "@tapedeck/protocol/api";
import { ownerOf, reachableToolset } from "../../tenancy/toolset-access.js";
import { mayRegisterToolset } from "../../tenancy/toolset-permission.js";
import { forbidUnless } from "../api-error.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { scriptRefused } from "./started-run.js";

/**
 * Toolsets are content-addressed and hold no secrets. Each belongs to the scopes that registered
 * it (`tenancy/toolset-access.ts`): one outside the caller's reach answers as an unknown id.
 */
export function toolsetRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CreateToolsetRequest }>(
    "/toolsets",
    {
      schema: {
        summary: "Register a toolset",
        description:
          "The body is a toolset file (see the README): MCP servers, host tools, policies, the `http` built-in. Registering connects to the MCP servers and pins their tools; the same toolset always gets the same id. " +
          "The toolset belongs to the caller's scope (its key's or token's namespace and labels): callers outside it get 404 for its id, as for an unknown one; an operator's toolset (an unlimited key without a namespace header) is every caller's. The same content registered from another scope gets the same id and adds that scope to its owners. " +
          "Its text is shown to every caller in reach and in logs, so a body holding a literal secret anywhere (a token, a password in a URL…) is refused (422 `invalid_toolset`, naming the field), as is a group named like a primitive or a global of the sandbox; nothing is stored.",
        tags: ["toolsets"],
        body: createToolsetRequest,
        response: { 200: registeredToolset, ...errors(400, 401, 403, 422) },
      },
    },
    async (request): Promise<RegisteredToolset> => {
      const caller = callerOf(request);
      forbidUnless(mayRegisterToolset(caller.scope, request.body));
      // A tenant's MCP servers are reached at public addresses only, registration included (docs/design/mcp-addresses.md).
      const registered = await context.engine().registerToolset(request.body, {
        ...(caller.operator ? {} : { mcpAddresses: "public" as const }),
        owner: ownerOf(caller),
      });
      return { id: registered.id, declarations: registered.declarations, warnings: registered.warnings ?? [] };
    },
  );

  app.post<{ Params: ToolsetParams; Body: SaveWorkflowRequest }>(
    "/toolsets/:id/workflows",
    {
      schema: {
        summary: "Save a workflow on a toolset",
        description:
          "Type-checks the code against the toolset's declarations, and its default export against `input` and `output` (typed from their schemas); then registers the toolset derived from this one that pins the workflow, and answers its id and declarations (201). " +
          "Scripts on the derived toolset call `workflows.<name>.start(input)` (a child run; `result()` waits for its output) and `workflows.<name>.signal(id, signal, payload)`. " +
          "The toolset `id` is unchanged; its workflows carry over; saving a name it has replaces that workflow in the derived toolset. Code that does not type-check is refused (422 `script_refused`, with diagnostics) and nothing is saved.",
        tags: ["toolsets"],
        params: toolsetParams,
        body: saveWorkflowRequest,
        response: { 201: savedWorkflow, ...errors(400, 401, 404, 422) },
      },
    },
    async (request, reply): Promise<SavedWorkflow> => {
      const caller = callerOf(request);
      await reachableToolset(context.store, caller, request.params.id);
      const { name, description, code, input, output, signals } = request.body;
      const saved = await context.engine().saveWorkflow({
        toolset: request.params.id,
        name,
        description,
        source: code,
        input,
        output,
        ...(signals === undefined ? {} : { signals }),
        owner: ownerOf(caller),
      });
      if (saved.kind === "refused") throw scriptRefused(saved.diagnostics, "the workflow was not saved. Fix the code and save it again.");
      void reply.code(201);
      return { id: saved.id, declarations: saved.declarations, warnings: saved.warnings };
    },
  );

  app.post<{ Params: ToolsetParams; Body: SaveToolRequest }>(
    "/toolsets/:id/tools",
    {
      schema: {
        summary: "Save a sandboxed user tool on a toolset (save_tool)",
        description:
          "Checks the tool (its fields, its grants, its TypeScript against exactly what it is granted and its own schemas), runs its test cases in the sandbox in virtual time (fetch and granted tools answered by each case's mocks: nothing is sent), " +
          "and registers the toolset derived from this one that pins it. Answers `saved: true` with the derived toolset's id and declarations, or `saved: false` with the problems, the code's diagnostics and the failing cases (what differed): nothing was saved.",
        tags: ["toolsets"],
        params: toolsetParams,
        body: saveToolRequest,
        response: { 200: savedTool, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<SavedTool> => {
      const caller = callerOf(request);
      await reachableToolset(context.store, caller, request.params.id);
      const saved = await context.engine().saveTool({ toolset: request.params.id, ...request.body, owner: ownerOf(caller) });
      if (saved.kind === "refused") return { saved: false, problems: saved.problems, diagnostics: saved.diagnostics, tests: saved.tests };
      return { saved: true, id: saved.id, declarations: saved.declarations, problems: [], diagnostics: saved.warnings, tests: saved.tests };
    },
  );

  app.get<{ Params: ToolsetParams }>(
    "/toolsets/:id",
    {
      schema: {
        summary: "A toolset: its pinned tools and declarations",
        description:
          "A toolset in the caller's reach: one registered from its scope (or a scope inside it, or one it is inside), or an operator's. Any other id is 404, exactly as an unknown one. A toolset holds no secret (registration refuses one that does).",
        tags: ["toolsets"],
        params: toolsetParams,
        response: { 200: toolsetInfo, ...errors(401, 404) },
      },
    },
    async (request): Promise<ToolsetInfo> => {
      await reachableToolset(context.store, callerOf(request), request.params.id);
      const found = await context.engine().toolset(request.params.id);
      return { id: found.id, toolset: found.toolset, declarations: found.declarations };
    },
  );

  app.get<{ Params: ToolsetParams }>(
    "/toolsets/:id/declarations",
    {
      schema: {
        summary: "A toolset's declarations (refreshed as observed result types improve)",
        tags: ["toolsets"],
        params: toolsetParams,
        response: { 200: declarations, ...errors(401, 404) },
      },
    },
    async (request): Promise<Declarations> => {
      await reachableToolset(context.store, callerOf(request), request.params.id);
      return (await context.engine().toolset(request.params.id)).declarations;
    },
  );

  app.get<{ Params: ToolsetParams; Querystring: ToolSearchQuery }>(
    "/toolsets/:id/search",
    {
      schema: {
        summary: "Search a toolset's tools",
        description:
          "The tools that best match `q` (words describing a need, or a tool's name), best first, with their TypeScript declarations: for toolsets too large for a prompt (`search_tools`). Ranked by BM25 over names, groups, descriptions and parameters, with prefix and fuzzy matching. " +
          "A query without words to search for is 400, its message written for the model.",
        tags: ["toolsets"],
        params: toolsetParams,
        querystring: toolSearchQuery,
        response: { 200: toolSearchResult, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<ToolSearchResult> => {
      await reachableToolset(context.store, callerOf(request), request.params.id);
      const hits = await context.engine().searchTools(request.params.id, request.query.q, { limit: request.query.limit ?? SEARCH_LIMIT.default });
      return { hits: hits.map(({ tool, group, score, declaration }) => ({ tool, group, score, declaration })) };
    },
  );
}
