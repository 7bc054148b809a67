/**
 * The names of the agent tools a model is given next to a toolset's tools (seed 001, plus
 * `save_tool`). Defined once here: the SDK builds the tools from it and the engine refuses
 * toolsets whose groups would take one of these names.
 */
export const AGENT_TOOL_NAMES = [
  "run_script",
  "check_script",
  "test_script",
  "get_run",
  "list_runs",
  "signal_run",
  "cancel_run",
  "retry_run",
  "search_tools",
  "save_workflow",
  "save_tool",
] as const;
export type AgentToolName = (typeof AGENT_TOOL_NAMES)[number];
