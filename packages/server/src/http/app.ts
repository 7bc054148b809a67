import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { RequestLog } from "../logging/request-log.js";
import type { ServerLogger } from "../logging/server-logger.js";
import { ApiError } from "./api-error.js";
import { identify } from "./auth/caller.js";
import { bodyTooLarge, errorHandler } from "./error-handler.js";
import { bodyProblem, bodyProblemMessage, MAX_JSON_DEPTH } from "./json-depth.js";
import { BODY_LIMIT_BYTES, DRAIN_LIMIT_BYTES } from "./limits.js";
import { approvalRoutes } from "./routes/approvals.js";
import { checkRoutes } from "./routes/check.js";
import { consoleRoutes } from "./routes/console.js";
import { credentialRoutes } from "./routes/credentials.js";
import { eventRoutes } from "./routes/events.js";
import { healthRoutes } from "./routes/health.js";
import { hookRoutes } from "./routes/hooks.js";
import { isMcpPath, mcpRoutes, rpcError, TRANSPORT_ERROR } from "./routes/mcp.js";
import type { McpSessionLimits } from "../mcp/http-sessions.js";
import { runActionRoutes } from "./routes/run-actions.js";
import { runPieceRoutes } from "./routes/run-pieces.js";
import { runRoutes } from "./routes/runs.js";
import { retentionRoutes } from "./routes/retention.js";
import { scheduleRoutes } from "./routes/schedules.js";
import { namespaceRoutes } from "./routes/namespaces.js";
import { sessionRoutes } from "./routes/sessions.js";
import { taskRoutes } from "./routes/tasks.js";
import { testRoutes } from "./routes/test.js";
import { tokenRoutes } from "./routes/tokens.js";
import { toolsetRoutes } from "./routes/toolsets.js";
import { webhookRoutes } from "./routes/webhooks.js";
import type { ServerContext } from "../runtime/server-context.js";
import { formatValidationErrors, validatorCompiler } from "./validation.js";
import { metricsRoute } from "../telemetry/metrics-route.js";

/**
 * The HTTP API as a Fastify application: probes and webhooks at the root, the API under `/v1`
 * behind authentication, Tapedeck as an MCP server at `/mcp` (`routes/mcp.ts`), and `GET /openapi.json` generated from the route schemas that
 * validate requests.
 */
export async function buildApp(context: ServerContext, logger: ServerLogger, mcp: McpSessionLimits): Promise<FastifyInstance> {
  const app = Fastify({
    // Fastify's own logger, with one line per answered request (no body, header, query or token).
    loggerInstance: logger,
    logController: new RequestLog(),
    bodyLimit: BODY_LIMIT_BYTES,
    schemaErrorFormatter: formatValidationErrors,
    // A JSON body with `__proto__` or `constructor.prototype` keys is refused (400), never merged into objects.
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    // Errors Fastify raises before routing (a malformed URL) get the same JSON error body.
    frameworkErrors: (error, _request, reply) => {
      // Fastify types this reply with the route's generics, which no route has yet.
      void (reply as FastifyReply).code(400).send(new ApiError("invalid_request", `The request is malformed: ${error.message}`).body());
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  // Answers are typed in TypeScript and sent as they are: response schemas document, never reshape.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(errorHandler());
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .send(new ApiError("not_found", `No route ${request.method} ${request.url.split("?")[0]}. The API is described at GET /openapi.json.`).body());
  });
  app.decorateRequest("caller", null);
  // Answers sent once the server is stopping close their connection. A held request (a long poll)
  // answered after the close began leaves a keep-alive connection that only then becomes idle,
  // which Fastify's close no longer looks at: it would hold the process for its timeout (72 s).
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (context.stopping.aborted) void reply.header("connection", "close");
    done(null, payload);
  });
  // A body declared too large is refused before it is read (Fastify would answer the same 413
  // but close the connection under a client still sending, which then sees a broken pipe).
  app.addHook("onRequest", (request, reply, done) => {
    const declared = Number(request.headers["content-length"]);
    if (!(declared > BODY_LIMIT_BYTES)) return done();
    if (declared > DRAIN_LIMIT_BYTES) void reply.header("connection", "close");
    // An MCP client reads a JSON-RPC error; every other caller the API's.
    const tooLarge = bodyTooLarge();
    void reply.code(413).send(isMcpPath(request.url) ? rpcError(TRANSPORT_ERROR, tooLarge.message) : tooLarge.body());
  });
  app.addHook("preValidation", (request, _reply, done) => {
    const problem = bodyProblem(request.body, MAX_JSON_DEPTH);
    done(problem === undefined ? undefined : new ApiError("invalid_request", bodyProblemMessage(problem)));
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Tapedeck",
        version: "0.1.0",
        description:
          "A durable tool runtime for LLM agents. Every /v1 route takes `Authorization: Bearer <API key or end user's token>`; the `tapedeck-namespace` header narrows a request to one end user.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    },
  });

  healthRoutes(app, context);
  metricsRoute(app, context);
  hookRoutes(app, context);
  // The web console's page and files (no data: the page signs in to /v1 like any client).
  consoleRoutes(app);
  // MCP over Streamable HTTP: authenticated as /v1 is, by the route itself (its errors are JSON-RPC, not the API's).
  mcpRoutes(app, context, mcp);
  await app.register(
    (v1, _options, done) => {
      v1.addHook("onRequest", async (request) => {
        // A node that cannot reach its store says so at once, not after its reads gave up retrying.
        context.ensureStoreReachable();
        request.caller = await identify(request.headers, context);
      });
      // A POST without a body is an empty request object: `/cancel` needs nothing, and `/runs`
      // says which field is missing rather than that the body is not an object.
      v1.addHook("preValidation", (request, _reply, done) => {
        if (request.body === undefined && request.method === "POST") request.body = {};
        done();
      });
      v1.addHook("onRoute", (route) => {
        route.schema = { ...route.schema, security: [{ bearer: [] }] };
      });
      toolsetRoutes(v1, context);
      checkRoutes(v1, context);
      testRoutes(v1, context);
      runRoutes(v1, context);
      runPieceRoutes(v1, context);
      runActionRoutes(v1, context);
      eventRoutes(v1, context);
      approvalRoutes(v1, context);
      tokenRoutes(v1, context);
      taskRoutes(v1, context);
      webhookRoutes(v1, context);
      credentialRoutes(v1, context);
      sessionRoutes(v1, context);
      retentionRoutes(v1, context);
      scheduleRoutes(v1, context);
      namespaceRoutes(v1, context);
      done();
    },
    { prefix: "/v1" },
  );
  app.get("/openapi.json", { schema: { hide: true } }, () => app.swagger());
  return app;
}
