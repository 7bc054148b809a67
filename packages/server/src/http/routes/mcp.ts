import { createHash, randomUUID } from "node:crypto";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { NAMESPACE_HEADER, namespaceError } from "@tapedeck/protocol/api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { inProcessFetch } from "../../embedded/in-process-fetch.js";
import { McpSessions, type McpSessionLimits } from "../../mcp/http-sessions.js";
import { openHttpSession, type HttpSession } from "../../mcp/open-http-session.js";
import { mcpServerInfo } from "../../mcp/server-info.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { mayActAs } from "../../tenancy/end-user-access.js";
import { identify, type Caller } from "../auth/caller.js";
import { toApiError } from "../error-handler.js";

/** JSON-RPC's code for a request that is not JSON. */
const PARSE_ERROR = -32700;
/** The code the SDK's transport answers transport-level refusals with (no session, a bad header). */
export const TRANSPORT_ERROR = -32000;
/** What a refused credential is answered with: an implementation-defined server error, as MCP's own examples use. */
const UNAUTHORIZED = -32001;

/**
 * `/mcp`: Tapedeck as an MCP server over Streamable HTTP (the official SDK's transport: sessions,
 * SSE streams, resumption with `Last-Event-ID`), in code mode over `?toolset=<id>`.
 *
 * - Every request needs `Authorization: Bearer <API key or end user's token>`, checked as for
 *   `/v1` (401 with `WWW-Authenticate: Bearer` otherwise); the tools then act with that same
 *   credential, so its namespace and labels bound everything the session reaches.
 * - A session belongs to the credential that opened it: another credential naming its id gets
 *   404, as for a session that does not exist.
 * - At most `maxPerOwner` sessions of one key (or its tokens) for one end user (429 past it), and
 *   `maxSessions` in all (503): a refused `initialize` leaves the open sessions, and the other
 *   tenants' room, as they were. Idle sessions close after `idleMs`.
 * - A browser `Origin` other than this machine's is refused (403), against DNS rebinding.
 * - Every refusal is a JSON-RPC error body, so an MCP client shows its message.
 *
 * The route hijacks the reply and hands Node's raw request and response to the transport, which
 * writes the answer (JSON or an SSE stream) itself; the body is read by Fastify (its size limit
 * applies) and parsed here, so a body that is not JSON gets JSON-RPC's parse error.
 */
export function mcpRoutes(app: FastifyInstance, context: ServerContext, limits: McpSessionLimits): void {
  const sessions = new McpSessions<HttpSession>(limits, context.now);
  const serverInfo = mcpServerInfo();
  const fetch = inProcessFetch(app);
  // Idle sessions close without a request to notice them; unref'd, so it never holds a stopping process.
  const sweeper = setInterval(() => sessions.sweep(), Math.max(1000, Math.min(60_000, limits.idleMs / 4)));
  sweeper.unref();
  context.stopping.addEventListener(
    "abort",
    () => {
      clearInterval(sweeper);
      void sessions.closeAll();
    },
    { once: true },
  );

  void app.register((scope, _options, done) => {
    // Every body as text: JSON-RPC's parse error is this route's to answer, and the transport checks the content type itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, next) => next(null, body));
    scope.setErrorHandler((error, _request, reply) => {
      const api = toApiError(error);
      void reply.code(api.status).send(rpcError(TRANSPORT_ERROR, api.message));
    });
    scope.route({
      method: ["GET", "POST", "DELETE"],
      url: "/mcp",
      schema: { hide: true },
      handler: (request, reply) => handle(request, reply),
    });
    done();
  });

  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const origin = request.headers.origin;
    if (origin !== undefined && !loopbackOrigin(origin))
      return reply
        .code(403)
        .send(
          rpcError(
            TRANSPORT_ERROR,
            `Origin ${JSON.stringify(origin.slice(0, 200))} is refused: /mcp answers MCP clients and pages served from this machine only.`,
          ),
        );
    let bearer: string;
    let caller: Caller;
    try {
      context.ensureStoreReachable();
      caller = await identify(request.headers, context);
      bearer = /^Bearer +(\S+) *$/i.exec(String(request.headers.authorization))![1]!;
    } catch (error) {
      const api = toApiError(error);
      if (api.status === 401) {
        const given = request.headers.authorization !== undefined;
        void reply.header("www-authenticate", `Bearer realm="tapedeck"${given ? ', error="invalid_token"' : ""}`);
      }
      return reply.code(api.status).send(rpcError(api.status === 401 ? UNAUTHORIZED : TRANSPORT_ERROR, api.message));
    }
    const credential = createHash("sha256").update(bearer).digest("hex");
    let body: unknown;
    if (request.method === "POST") {
      try {
        body = JSON.parse(typeof request.body === "string" ? request.body : "");
      } catch (error) {
        return reply
          .code(400)
          .send(rpcError(PARSE_ERROR, `Parse error: the body is not JSON (${(error as Error).message}). Send one JSON-RPC message or a batch.`));
      }
    }

    const sessionHeader = request.headers["mcp-session-id"];
    let session: HttpSession;
    let opening = false;
    if (typeof sessionHeader === "string") {
      const found = sessions.get(sessionHeader);
      // Another credential's session is answered as a missing one: its id tells a stranger nothing.
      if (found === undefined || found.credential !== credential)
        return reply
          .code(404)
          .send(rpcError(TRANSPORT_ERROR, "Session not found: it expired, was closed, or the server restarted. Send initialize to start a new one."));
      session = found;
    } else if (request.method === "POST" && isInitializeRequest(body)) {
      const opened = await openSession(request, caller, bearer, credential);
      if (!opened.ok) return reply.code(opened.status).send(rpcError(TRANSPORT_ERROR, opened.message));
      session = opened.session;
      opening = true;
    } else {
      return reply
        .code(400)
        .send(
          rpcError(TRANSPORT_ERROR, "Bad Request: no Mcp-Session-Id header. Start a session with an initialize request, then send its id with every request."),
        );
    }

    const done = sessions.begin(session.id);
    reply.raw.once("close", done);
    reply.hijack();
    try {
      await session.transport.handleRequest(request.raw, reply.raw, body);
    } catch (error) {
      request.log.error({ err: error }, "the MCP transport failed");
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { "content-type": "application/json" });
      if (!reply.raw.writableEnded) reply.raw.end(JSON.stringify(rpcError(-32603, "Tapedeck failed while answering; the error was logged on the server.")));
    }
    // An initialize the transport refused (a bad Accept header, a malformed request) opened no session: its place is given back now.
    if (opening && session.transport.sessionId === undefined) {
      sessions.forget(session.id);
      await session.close();
    }
  }

  async function openSession(
    request: FastifyRequest,
    caller: Caller,
    bearer: string,
    credential: string,
  ): Promise<{ readonly ok: true; readonly session: HttpSession } | { readonly ok: false; readonly status: number; readonly message: string }> {
    const query = request.query as Record<string, unknown>;
    const toolset = query.toolset;
    if (typeof toolset !== "string" || toolset === "")
      return { ok: false, status: 400, message: "Name the toolset: /mcp?toolset=<id> (the id POST /v1/toolsets answered)." };
    const mode = query.mode ?? "code";
    if (mode !== "code")
      return {
        ok: false,
        status: 400,
        message: `mode=${JSON.stringify(mode)} is not served over HTTP: /mcp serves code mode only (mode=code, the default). Direct tools are at /v1/sessions.`,
      };
    // The runs a model starts belong to an end user: the credential's own, else the one the caller names (as `tapedeck mcp --namespace` does).
    const named = request.headers[NAMESPACE_HEADER] ?? query.namespace;
    const namespace = caller.kind === "token" ? undefined : (caller.endUser ?? (typeof named === "string" && named !== "" ? named : undefined));
    if (caller.kind === "key" && namespace === undefined)
      return {
        ok: false,
        status: 400,
        message: `Name the end user the runs belong to: /mcp?toolset=<id>&namespace=<user> (or the ${NAMESPACE_HEADER} header), or use a key or token limited to one end user.`,
      };
    const problem = namespace === undefined ? undefined : namespaceError(namespace, "The namespace");
    if (problem !== undefined) return { ok: false, status: 400, message: problem };
    // Refused here rather than at the first run_script: a session whose every run would be refused is of no use.
    const may = mayActAs(caller, namespace, "running scripts");
    if (!may.ok) return { ok: false, status: 403, message: may.reason };
    // One owner: a key (or the tokens it minted) acting for one end user.
    const owner = `${caller.keyId}/${namespace ?? caller.endUser ?? ""}`;
    const place = sessions.reserve(owner);
    if (place === "owner")
      return {
        ok: false,
        status: 429,
        message: `This credential holds ${sessions.limits.maxPerOwner} MCP sessions for this end user, the most it may: close sessions it no longer uses (DELETE /mcp with their Mcp-Session-Id), or let them expire.`,
      };
    if (place === "server")
      return {
        ok: false,
        status: 503,
        message: `Too many MCP sessions are open (${sessions.limits.maxSessions}): try again later, or close sessions you no longer use (DELETE /mcp).`,
      };
    const id = randomUUID();
    try {
      const opened = await openHttpSession({
        id,
        bearer,
        credential,
        namespace,
        toolset,
        fetch,
        serverInfo,
        logFault: (message) => request.log.error(message),
        closed: (closedId) => sessions.forget(closedId),
      });
      if (!opened.ok) {
        sessions.release(owner);
        return opened;
      }
      sessions.add(id, owner, opened.session);
      return opened;
    } catch (error) {
      sessions.release(owner);
      request.log.error({ err: error }, "an MCP session could not open");
      const api = toApiError(error);
      return { ok: false, status: api.status, message: api.message };
    }
  }
}

/** Whether a request is `/mcp`'s (its query aside). */
export function isMcpPath(url: string): boolean {
  return url === "/mcp" || url.startsWith("/mcp?");
}

/**
 * Whether a browser's `Origin` is this machine (MCP's Streamable HTTP says a server must check it,
 * against DNS rebinding: a page of another site whose name resolves to 127.0.0.1). Hosts send no
 * Origin; a bearer credential is needed in any case, which a rebinding page does not have.
 */
function loopbackOrigin(origin: string): boolean {
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

export function rpcError(code: number, message: string): { jsonrpc: "2.0"; error: { code: number; message: string }; id: null } {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}
