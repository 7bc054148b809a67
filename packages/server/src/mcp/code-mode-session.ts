import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Labels } from "@tapedeck/protocol/api";
import type { Tapedeck } from "@tapedeck/sdk";
import { codeModeServer } from "./code-mode-server.js";
import { addRunResources } from "./run-resources.js";
import type { RunWatch } from "./run-progress.js";
import { codeModeInstructions } from "./server-instructions.js";

export interface CodeModeSessionOptions {
  /** The client the tools act through, already narrowed to the caller (its key, token, namespace): every scope the HTTP API enforces applies. */
  readonly client: Tapedeck;
  /** The watch over `client`'s fetch (progress notifications read the runs its answers carry). */
  readonly watch: RunWatch;
  /** A registered toolset the client can reach. */
  readonly toolset: string;
  /** Set on every run started; default none (a key's own labels are added by the server in any case). */
  readonly labels?: Labels;
  /** Keeps one session's request ids apart from another's (`request-key.ts`). */
  readonly sessionId: string;
  readonly serverInfo: { readonly name: string; readonly version: string };
  readonly logFault: (message: string) => void;
}

/**
 * One MCP session's server in code mode over `client`: what `tapedeck mcp` (one session per
 * process) and `/mcp` (one per HTTP session) both build, so stdio and HTTP offer the same tools,
 * texts, instructions and run resources. Reading the toolset's declarations goes through the client, so a
 * toolset outside the caller's reach fails here (404) before any session exists.
 */
export async function codeModeSession(options: CodeModeSessionOptions): Promise<Server> {
  const { client } = options;
  const declarations = (await client.toolsets.get(options.toolset)).declarations.prompt;
  const tools = client.agentTools({ toolset: options.toolset, ...(options.labels === undefined ? {} : { labels: options.labels }) });
  const server = codeModeServer({
    tools,
    instructions: codeModeInstructions(
      declarations,
      tools.definitions.some((d) => d.name === "search_tools"),
    ),
    sessionId: options.sessionId,
    serverInfo: options.serverInfo,
    logFault: options.logFault,
    progress: { watch: options.watch, read: (runId) => client.runs.get(runId) },
  });
  addRunResources(server, client, options.labels);
  return server;
}
