import type { Tapedeck } from "../client.js";
import { agentToolAdapters, type AgentToolAdapters } from "./adapters.js";
import { AgentToolHandlers, type AgentToolsOptions } from "./agent-tools.js";
import { AGENT_TOOL_NAMES, agentToolDefinitions, type AgentToolName } from "./tool-definitions.js";

/** The agent tools of one agent: their definitions, a handler, and the adapters for each model API. */
export interface AgentTools extends AgentToolAdapters {
  /** The toolset the tools use now: after `save_workflow`, a derived toolset that pins the workflow. Keep it with the conversation. */
  readonly toolset: string | undefined;
}

/**
 * The tools offered when `tools` is not given: every tool that works with these options
 * (`search_tools`, `save_workflow` and `save_tool` need a toolset; `save_tool` is offered only
 * when the harness says what the model may grant its tools, `toolGrants`).
 */
function defaultTools(options: AgentToolsOptions): readonly AgentToolName[] {
  return AGENT_TOOL_NAMES.filter(
    (name) =>
      (options.toolset !== undefined || (name !== "search_tools" && name !== "save_workflow" && name !== "save_tool")) &&
      (name !== "save_tool" || options.toolGrants !== undefined),
  );
}

/** What `Tapedeck.agentTools` builds (see there). */
export function createAgentTools(client: Tapedeck, options: AgentToolsOptions): AgentTools {
  const tools = options.tools ?? defaultTools(options);
  for (const name of tools)
    if (!(AGENT_TOOL_NAMES as readonly string[]).includes(name))
      throw new TypeError(`agentTools: there is no agent tool ${JSON.stringify(name)}; the tools are ${AGENT_TOOL_NAMES.join(", ")}.`);
  const handlers = new AgentToolHandlers(client, options);
  const definitions = agentToolDefinitions({ tools, waitSeconds: handlers.waitSeconds, maxWaitSeconds: handlers.maxWaitSeconds });
  const adapters = agentToolAdapters(definitions, (name, input, context) => handlers.handle(name as AgentToolName, input, context));
  return {
    ...adapters,
    get toolset() {
      return handlers.toolset;
    },
  };
}
