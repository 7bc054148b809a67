import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Tapedeck, TapedeckError, type Fetch } from "@tapedeck/sdk";
import { BoundedEventStore } from "./bounded-event-store.js";
import { codeModeSession } from "./code-mode-session.js";
import { RunWatch } from "./run-progress.js";

/** The base URL `/mcp`'s clients name: their requests are injected into the app, never sent. */
const INJECTED_URL = "http://tapedeck.mcp";

/** One MCP session of `/mcp`: its transport, and the credential it was opened with. */
export interface HttpSession {
  readonly id: string;
  /** The SHA-256 of the bearer credential that opened it: only that credential may use it. */
  readonly credential: string;
  readonly transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

export interface HttpSessionOptions {
  readonly id: string;
  /** The caller's own bearer credential (API key or token): the tools' requests carry it, so the caller's scope applies to each. */
  readonly bearer: string;
  /** Its SHA-256, for `HttpSession.credential`. */
  readonly credential: string;
  /** The namespace header the caller sent, if any: the tools' requests send it too. */
  readonly namespace: string | undefined;
  readonly toolset: string;
  /** Into the app without a socket (`inProcessFetch` without a channel). */
  readonly fetch: Fetch;
  readonly serverInfo: { readonly name: string; readonly version: string };
  readonly logFault: (message: string) => void;
  /** Told when the session ends by itself (a DELETE, the transport closed). */
  readonly closed: (id: string) => void;
}

/**
 * Opens an MCP session in code mode for one caller: a client with the caller's own credential
 * (so the runs it starts carry the key's namespace and labels, and `get_run` of a run outside
 * them is "not found", exactly as the HTTP API answers), the code-mode server over it, and a
 * Streamable HTTP transport whose session id is `id` (the request ids' idempotency keys include
 * it). Answers a refusal, opening nothing, when the API refuses the caller (the toolset is not in
 * its reach: 404); rejects on a fault.
 */
export async function openHttpSession(
  options: HttpSessionOptions,
): Promise<{ readonly ok: true; readonly session: HttpSession } | { readonly ok: false; readonly status: number; readonly message: string }> {
  const watch = new RunWatch();
  const client = new Tapedeck({
    baseUrl: INJECTED_URL,
    apiKey: options.bearer,
    fetch: watch.fetch(options.fetch),
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
  let server: Server;
  try {
    server = await codeModeSession({
      client,
      watch,
      toolset: options.toolset,
      sessionId: options.id,
      serverInfo: options.serverInfo,
      logFault: options.logFault,
    });
  } catch (error) {
    if (error instanceof TapedeckError && error.status === 404)
      return {
        ok: false,
        status: 404,
        message: `No toolset ${JSON.stringify(options.toolset)} in this credential's reach. Register it with POST /v1/toolsets.`,
      };
    if (error instanceof TapedeckError && error.status > 0 && error.status < 500) return { ok: false, status: error.status, message: error.message };
    throw error;
  }
  let ended = false;
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => options.id,
    eventStore: new BoundedEventStore(),
    onsessionclosed: () => end(),
  });
  const end = (): void => {
    if (ended) return;
    ended = true;
    options.closed(options.id);
  };
  transport.onclose = end;
  await server.connect(transport);
  const session: HttpSession = {
    id: options.id,
    credential: options.credential,
    transport,
    close: async () => {
      end();
      await server.close();
    },
  };
  return { ok: true, session };
}
