import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { FixtureState } from "./fixture-state.js";
import { createFixtureServer } from "./fixture-tools.js";
import type { DropStage, FixtureServerOptions } from "./fixture-tools.js";
import type { Misbehaviour } from "./misbehaviour.js";

/**
 * The fixture over Streamable HTTP, in process, on 127.0.0.1 and an ephemeral port: stateful
 * sessions, one `McpServer` per session (as the SDK's examples do), all sharing one
 * `FixtureState`, so a client that reconnects meets the same effects ledger and tool list.
 * `drop()` destroys the socket of its own request; the server keeps serving.
 */

export interface HttpFixtureOptions extends Omit<FixtureServerOptions, "state" | "dropConnection"> {
  /** Every request without `Authorization: Bearer <requireBearer()>` gets 401. Default: no auth. */
  requireBearer?: () => string;
  /** Breaks the protocol on every tools/call (other requests work). Default: behaves. */
  misbehave?: Misbehaviour;
}

export interface HttpFixture {
  /** The MCP endpoint: http://127.0.0.1:<port>/mcp. */
  readonly url: string;
  /** HTTP requests received so far, the rejected ones included. */
  readonly requests: number;
  /** `tools/list` requests received so far (every page counts). */
  readonly lists: number;
  /** Resolves once `n` `tools/call` requests for `tool` have been received (at once if they have). */
  calls(tool: string, n: number): Promise<void>;
  /** How many `tools/call` requests for `tool` were received so far. */
  callsOf(tool: string): number;
  /** Sessions open now (initialized and not terminated). */
  sessions(): number;
  /** What every session shares: the effects ledger and the tool-list edits. */
  readonly state: FixtureState;
  /** Ends every session and connection, then stops listening. */
  close(): Promise<void>;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  /** Open responses of tools/call requests, by JSON-RPC id, for `drop()`. */
  readonly calls: Map<RequestId, ServerResponse>;
}

export async function startHttpFixture(options: HttpFixtureOptions = {}): Promise<HttpFixture> {
  const { requireBearer, misbehave, ...serverOptions } = options;
  const state = new FixtureState();
  const sessions = new Map<string, Session>();
  const held = new Set<ServerResponse>();
  let requests = 0;
  let lists = 0;
  const called = new Map<string, number>();
  const waiting = new Set<{ tool: string; n: number; resolve: () => void }>();
  const sawCall = (tool: string): void => {
    called.set(tool, (called.get(tool) ?? 0) + 1);
    for (const wait of waiting) {
      if (wait.tool !== tool || called.get(tool)! < wait.n) continue;
      waiting.delete(wait);
      wait.resolve();
    }
  };

  const openSession = async (): Promise<Session> => {
    const calls = new Map<RequestId, ServerResponse>();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, session),
    });
    const session: Session = { transport, calls };
    transport.onclose = () => void (transport.sessionId !== undefined && sessions.delete(transport.sessionId));
    const dropConnection = (id: RequestId, stage: DropStage): void => {
      const res = calls.get(id);
      if (res !== undefined) destroyAt(res, stage);
    };
    await createFixtureServer({ ...serverOptions, state, dropConnection }).connect(transport);
    return session;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    requests += 1;
    if (requireBearer !== undefined && req.headers.authorization !== `Bearer ${requireBearer()}`) return unauthorized(res);
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") return reply(res, 404, "not found: the endpoint is /mcp");
    const body = req.method === "POST" ? await readJson(req) : undefined;
    if (body instanceof SyntaxError) return reply(res, 400, `body is not JSON: ${body.message}`);
    const call = toolsCall(body);
    if (isJSONRPCRequest(body) && body.method === "tools/list") lists += 1;
    if (call !== undefined && isJSONRPCRequest(body)) sawCall(String(body.params?.name));
    if (call !== undefined && misbehave !== undefined) return misbehaveOn(res, misbehave, held);
    const id = req.headers["mcp-session-id"];
    let session = typeof id === "string" ? sessions.get(id) : undefined;
    if (session === undefined && id !== undefined) return reply(res, 404, "unknown session: initialize again");
    if (session === undefined && !isInitializeRequest(body)) return reply(res, 400, "no session: send initialize first");
    session ??= await openSession();
    if (call !== undefined) trackCall(session, call, res);
    await session.transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, String(error));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get requests() {
      return requests;
    },
    get lists() {
      return lists;
    },
    callsOf: (tool) => called.get(tool) ?? 0,
    calls: (tool, n) => ((called.get(tool) ?? 0) >= n ? Promise.resolve() : new Promise<void>((resolve) => void waiting.add({ tool, n, resolve }))),
    sessions: () => sessions.size,
    state,
    close: async () => {
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      for (const res of held) res.destroy();
      http.closeAllConnections();
      await new Promise<void>((resolve, reject) => http.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function trackCall(session: Session, id: RequestId, res: ServerResponse): void {
  session.calls.set(id, res);
  res.on("close", () => session.calls.delete(id));
}

/** Destroys `res`'s socket now, or once its headers went out (the SDK streams every answer as SSE). */
function destroyAt(res: ServerResponse, stage: DropStage): void {
  if (stage === "before-response" || res.headersSent) return void res.destroy();
  const flushHeaders = res.flushHeaders.bind(res);
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.flushHeaders = () => (flushHeaders(), void res.destroy());
  res.write = ((...args: unknown[]) => (write(...args), res.destroy(), false)) as typeof res.write;
}

/** The id of the tools/call request `body` holds, if any. */
function toolsCall(body: unknown): RequestId | undefined {
  return isJSONRPCRequest(body) && body.method === "tools/call" ? body.id : undefined;
}

function misbehaveOn(res: ServerResponse, mode: Misbehaviour, held: Set<ServerResponse>): void {
  if (mode === "exit-mid-call" || mode === "stderr-exit") res.destroy();
  else if (mode === "malformed") res.writeHead(200, { "content-type": "application/json" }).end("this body is not JSON-RPC {");
  else held.add(res);
}

function unauthorized(res: ServerResponse): void {
  res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"', "content-type": "application/json" });
  res.end(JSON.stringify({ error: "invalid_token", error_description: "missing or stale bearer token" }));
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "text/plain" }).end(message);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch (error) {
    return error instanceof SyntaxError ? error : new SyntaxError(String(error));
  }
}
