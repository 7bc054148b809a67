/**
 * Code mode over MCP: the SDK's agent tools (`run_script`, `get_run`, …, the same definitions,
 * texts and handlers the model API adapters give a model) as the tools of an MCP server.
 *
 * Invariants:
 * - The tools' handlers run over a Tapedeck client, so every scope the HTTP API enforces applies
 *   (the namespace, the labels): there is no second code path into the engine.
 * - A `tools/call` is idempotent by its JSON-RPC request id within the session: that id is the
 *   tool call id the handlers turn into the idempotency key of what they start or send.
 * - The model's mistakes (bad arguments, a refused script, a missing run) are tool results with
 *   `isError`, which the model reads and fixes; an unknown tool is a JSON-RPC error (-32602, as
 *   MCP says); a fault of the platform is a JSON-RPC internal error, logged on stderr.
 * - A cancelled request (`notifications/cancelled`) stops nothing: the run goes on (the tool
 *   text says so), and the SDK drops the answer.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentToolName, AgentTools, Run } from "@tapedeck/sdk";
import { AGENT_TOOL_ANNOTATIONS } from "./agent-tool-annotations.js";
import { requestCallId } from "./request-key.js";
import type { RunWatch } from "./run-progress.js";

export interface CodeModeServerOptions {
  /** The agent tools the server offers (`Tapedeck.agentTools`), with their scope. */
  readonly tools: AgentTools;
  /** The server's `instructions` (`codeModeInstructions`). */
  readonly instructions: string;
  /** Keeps one session's request ids apart from another's: part of every idempotency key. */
  readonly sessionId: string;
  /** The server's name and version in `initialize`. */
  readonly serverInfo: { readonly name: string; readonly version: string };
  /** Where faults are reported (never stdout, which is the protocol's). */
  readonly logFault: (message: string) => void;
  /** Progress of long calls, for a client that asks (`run-progress.ts`): the watch over the tools' client, and how to read a run. Default: none. */
  readonly progress?: { readonly watch: RunWatch; readonly read: (runId: string) => Promise<Run> };
}

/** What `run_script` and `retry_run` add over MCP: a cancelled request is not a cancelled run. */
const CANCEL_NOTE =
  " Over MCP, cancelling the request (notifications/cancelled) does not cancel the run: it goes on, list_runs and get_run find it, and cancel_run stops it.";

/** An MCP server (not yet connected) offering `options.tools`. */
export function codeModeServer(options: CodeModeServerOptions): Server {
  const server = new Server({ ...options.serverInfo }, { capabilities: { tools: {} }, instructions: options.instructions });
  const offered = new Map<string, Tool>(options.tools.definitions.map((d) => [d.name, mcpTool(d.name, d.description, d.inputSchema)]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...offered.values()] }));
  // Registered with only the method checked: the Server then validates the params itself and answers a
  // malformed call -32602 (Invalid params), where the protocol layer's own parse would answer -32603.
  server.setRequestHandler(CallToolRequestSchema.pick({ method: true }).loose(), async (raw, extra): Promise<CallToolResult> => {
    const request = CallToolRequestSchema.parse(raw);
    const { name } = request.params;
    if (!offered.has(name))
      throw new McpError(ErrorCode.InvalidParams, `There is no tool ${JSON.stringify(name).slice(0, 200)}. The tools are: ${[...offered.keys()].join(", ")}.`);
    const progressToken = request.params._meta?.progressToken;
    const call = () => options.tools.handle(name, request.params.arguments ?? {}, { toolCallId: requestCallId(options.sessionId, extra.requestId) });
    const { progress } = options;
    try {
      const result =
        progressToken === undefined || progress === undefined
          ? await call()
          : await progress.watch.reporting(
              (value, message) => extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: value, message } }),
              progress.read,
              call,
            );
      return { content: [{ type: "text", text: result.content }], isError: result.isError };
    } catch (error) {
      options.logFault(`tapedeck mcp: ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      throw new McpError(ErrorCode.InternalError, `Tapedeck could not handle ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  return server;
}

function mcpTool(name: AgentToolName, description: string, inputSchema: Tool["inputSchema"]): Tool {
  const text = name === "run_script" || name === "retry_run" ? description + CANCEL_NOTE : description;
  return { name, description: text, inputSchema, annotations: AGENT_TOOL_ANNOTATIONS[name] };
}
