import type { PinnedTool, ToolSourceKind } from "@tapedeck/protocol";
import { toolFailure } from "@tapedeck/protocol";
import type { ResumedCall, ToolCallRequest, ToolOutcome, ToolSource } from "./tool-source.js";

/** Sends each call to the source of its tool's kind (host, mcp, builtin). */
export class SourceRouter implements ToolSource {
  constructor(private readonly sources: Partial<Record<ToolSourceKind, ToolSource>>) {}

  /** Why this engine cannot serve some of `tools`: a kind without a source, or a source that says it lacks some (`ToolSource.check`). */
  check(tools: readonly PinnedTool[]): string | undefined {
    const host = tools.filter((t) => t.source === "host");
    if (host.length > 0 && this.sources.host === undefined) {
      return `The toolset has host tools (${host.map((t) => `${t.group}.${t.name}`).join(", ")}) but this engine has no host tool implementations: pass a host module (--host ./tools.ts).`;
    }
    for (const source of Object.values(this.sources)) {
      const problem = source.check?.(tools);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  call(request: ToolCallRequest): Promise<ToolOutcome> {
    const source = this.sources[request.tool.source];
    if (!source) {
      const failure = toolFailure(
        "tool_error",
        `No ${request.tool.source} tool source is configured in this engine for ${request.tool.group}.${request.tool.name}.`,
      );
      return Promise.resolve({ kind: "failure", failure });
    }
    return source.call(request);
  }

  /** Asks the source of the call's tool (see `ToolSource.resumes`). */
  resumes(call: ResumedCall): Promise<boolean> | undefined {
    return this.sources[call.tool.source]?.resumes?.(call);
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.sources).map((s) => (s.close ? s.close() : Promise.resolve())));
  }
}
