import { ToolError, type JsonValue } from "@tapedeck/protocol";
import { failure, type Capability, type LibraryTool, type ToolContext, type ToolResult } from "./library-tool.js";

/**
 * Calls a library tool the way a tool source must (`ToolSource.call` never rejects): whatever
 * `execute` does, the caller gets a `ToolResult`. A thrown `ToolError` is the failure it carries;
 * any other throw is a bug in the tool, reported as `tool_error` naming the tool; a call whose
 * signal aborted while it ran is reported as aborted, not as the tool's error.
 */
export async function callLibraryTool<C extends Capability>(tool: LibraryTool<C>, args: JsonValue, ctx: ToolContext<C>): Promise<ToolResult> {
  try {
    return await tool.execute(args, ctx);
  } catch (error) {
    if (ToolError.is(error)) return { kind: "failure", failure: error.toFailure() };
    if (ctx.signal.aborted) return failure("timeout", `${tool.name} was stopped before it finished (${describe(ctx.signal.reason)}).`);
    return failure(
      "tool_error",
      `The built-in tool ${tool.name} failed unexpectedly: ${describe(error)}. This is a bug in Tapedeck; please report it with the arguments that caused it.`,
    );
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
