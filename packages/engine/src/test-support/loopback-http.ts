import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { JsonValue, PinnedTool } from "@tapedeck/protocol";
import type { ToolCallRequest } from "../sources/tool-source.js";
import { pinHttpTool } from "../toolset/pin-http.js";
import type { HostResolver } from "../sources/http/resolver.js";

/**
 * An HTTP server on 127.0.0.1 for the `http` tool's tests: routes by path, records every
 * request it gets (method, path, headers, body), and never listens anywhere but loopback.
 * A route that never answers is how a test makes a slow server (no sleeps, no timers).
 */

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type Route = (request: ReceivedRequest, response: ServerResponse) => void;

export interface LoopbackServer {
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Responses left hanging by routes that never answer, ended by `close`. */
  close(): Promise<void>;
}

export async function startLoopbackServer(routes: Readonly<Record<string, Route>>): Promise<LoopbackServer> {
  const received: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      const request = { method: req.method ?? "GET", path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(request);
      const route = routes[path.split("?")[0]!];
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      if (route) route(request, res);
      else res.writeHead(404).end("no route");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A resolver answering from a table (a name → its answers, or a function of the lookup count), counting lookups. */
export function tableResolver(
  table: Readonly<Record<string, readonly string[] | ((lookup: number) => readonly string[])>>,
): HostResolver & { readonly lookups: string[] } {
  const lookups: string[] = [];
  const resolver = (hostname: string): Promise<readonly string[]> => {
    lookups.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
    const count = lookups.filter((name) => name === hostname).length;
    return Promise.resolve(typeof entry === "function" ? entry(count) : entry);
  };
  return Object.assign(resolver, { lookups });
}

let seq = 0;

/** A call of `http.fetch` as the dispatcher would make it. */
export function fetchCall(
  allow: readonly string[],
  args: { readonly url: string; readonly method?: string; readonly headers?: Readonly<Record<string, string>>; readonly body?: string },
  signal: AbortSignal = new AbortController().signal,
): ToolCallRequest {
  const tool: PinnedTool = pinHttpTool(allow, {});
  seq++;
  const value: JsonValue = {
    url: args.url,
    method: args.method ?? "GET",
    headers: { ...args.headers },
    ...(args.body === undefined ? {} : { body: args.body }),
  };
  return {
    tool,
    args: value,
    runId: "run_http",
    seq,
    idempotencyKey: `run_http/${seq}`,
    attempt: 1,
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    signal,
  };
}
