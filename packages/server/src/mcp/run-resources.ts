/**
 * Runs as MCP resources: `tapedeck://runs/{id}` (a resource template), read as one JSON document
 * (the run's state, the first page of its journal, the first page of its output once completed),
 * listed (the caller's latest runs) and subscribed to (`notifications/resources/updated` each time
 * the run's status or journal length changes, until it ends).
 *
 * Everything is read through the session's client, so the scope is the HTTP API's: a run outside
 * the key's or token's namespace and labels is "not found", as is one without the session's own
 * labels (`tapedeck mcp --labels`), exactly as the agent tools answer its id.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { terminalStatuses } from "@tapedeck/protocol";
import type { Labels } from "@tapedeck/protocol/api";
import { TapedeckError, type Run, type Tapedeck } from "@tapedeck/sdk";
import { PROGRESS_POLL_MS } from "./run-progress.js";

export const RUN_URI_TEMPLATE = "tapedeck://runs/{id}";
/** MCP's error code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;
/** Runs `resources/list` answers: the latest; older ones are read by id. */
const LISTED_RUNS = 50;
/** Journal entries a read carries (the rest through the API's `/journal?from=`). */
const JOURNAL_ENTRIES = 100;
/** Output characters a read carries (the rest through `get_run` with `offset`). */
const OUTPUT_CHARS = 256 * 1024;
/** Subscriptions one session may hold: each polls its run. */
const MAX_SUBSCRIPTIONS = 100;

export function runUri(id: string): string {
  return `tapedeck://runs/${encodeURIComponent(id)}`;
}

/** Adds the run resources to `server` (before it connects). */
export function addRunResources(server: Server, client: Tapedeck, labels: Labels | undefined): void {
  server.registerCapabilities({ resources: { subscribe: true } });
  const subscriptions = new Map<string, NodeJS.Timeout>();

  const read = async (uri: string): Promise<Run> => {
    const id = runIdOf(uri);
    try {
      const run = await client.runs.get(id);
      if (labels !== undefined && !Object.entries(labels).every(([k, v]) => run.labels?.[k] === v)) throw notFound(uri);
      return run;
    } catch (error) {
      if (error instanceof TapedeckError && error.status === 404) throw notFound(uri);
      throw error;
    }
  };

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: RUN_URI_TEMPLATE,
        name: "run",
        title: "A Tapedeck run",
        description:
          "A run's state, the first 100 entries of its journal and, once completed, its output, as JSON. Subscribe to hear of each change while it goes on.",
        mimeType: "application/json",
      },
    ],
  }));

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const runs = await client.runs.list({ limit: LISTED_RUNS, ...(labels === undefined ? {} : { labels }) });
    return {
      resources: runs.map((run): Resource => ({ uri: runUri(run.id), name: run.id, title: `Run ${run.id} (${run.status})`, mimeType: "application/json" })),
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const run = await read(uri);
    const journal = await client.runs.journal(run.id, { limit: JOURNAL_ENTRIES });
    const output = run.status === "completed" ? await client.runs.output(run.id, { limit: OUTPUT_CHARS }) : undefined;
    const document = { run, journal, ...(output === undefined ? {} : { output }) };
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(document, null, 2) }] };
  });

  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { uri } = request.params;
    const first = await read(uri);
    if (subscriptions.has(uri) || terminalStatuses.includes(first.status)) return {};
    if (subscriptions.size >= MAX_SUBSCRIPTIONS)
      throw new McpError(ErrorCode.InvalidRequest, `A session follows at most ${MAX_SUBSCRIPTIONS} runs: unsubscribe from some first.`);
    let last = stateOf(first);
    // Polled through the client (its scope applies to every read); a read that fails is tried at the next tick.
    const timer = setInterval(() => {
      read(uri).then(
        (run) => {
          const now = stateOf(run);
          if (now !== last) {
            last = now;
            void server.sendResourceUpdated({ uri }).catch(() => undefined);
          }
          if (terminalStatuses.includes(run.status)) stop(uri);
        },
        () => undefined,
      );
    }, PROGRESS_POLL_MS);
    timer.unref();
    subscriptions.set(uri, timer);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    stop(request.params.uri);
    return {};
  });

  const stop = (uri: string): void => {
    clearInterval(subscriptions.get(uri));
    subscriptions.delete(uri);
  };
  const closed = server.onclose;
  server.onclose = () => {
    for (const uri of [...subscriptions.keys()]) stop(uri);
    closed?.();
  };
}

function stateOf(run: Run): string {
  return `${run.status}/${run.journalLength}`;
}

function runIdOf(uri: string): string {
  const match = /^tapedeck:\/\/runs\/([^/?#]+)$/.exec(uri);
  if (!match) throw new McpError(ErrorCode.InvalidParams, `${JSON.stringify(uri.slice(0, 200))} is not a run's resource: runs are ${RUN_URI_TEMPLATE}.`);
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${JSON.stringify(uri.slice(0, 200))} is not a run's resource: its id is not valid percent-encoding.`);
  }
}

function notFound(uri: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
}
