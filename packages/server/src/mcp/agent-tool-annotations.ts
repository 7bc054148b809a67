import type { AgentToolName } from "@tapedeck/sdk";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";

/**
 * What each agent tool does to the world, as MCP tool annotations (hints a host uses to decide
 * what to confirm with its user). Set from what the tool can reach, not what it usually does:
 * a script may call any tool of the toolset, so `run_script` and `retry_run` are destructive and
 * open-world even though most scripts only read. `idempotentHint` is true only where a second
 * call with the same arguments changes nothing more (a repeated JSON-RPC request id is
 * idempotent for every tool; this hint is about new requests).
 */
export const AGENT_TOOL_ANNOTATIONS: { readonly [N in AgentToolName]: ToolAnnotations } = {
  run_script: { title: "Run a script", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  check_script: { title: "Type-check a script", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // Mocks in virtual time: no real tool is called and no run is kept.
  test_script: { title: "Test a script against mocks", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  get_run: { title: "Read a run", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  list_runs: { title: "List runs", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // A signal adds to what a run receives; it deletes nothing, but each new one is delivered.
  signal_run: { title: "Signal a run", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  // Stops a run and abandons its calls in flight; cancelling an ended run changes nothing.
  cancel_run: { title: "Cancel a run", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  retry_run: { title: "Retry a run with corrected code", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  search_tools: { title: "Search the toolset", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // Adds a workflow to a derived toolset; nothing existing is changed.
  save_workflow: { title: "Save a workflow", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  save_tool: { title: "Save a tool", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};
