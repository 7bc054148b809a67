import type { ToolSourceKind } from "@tapedeck/protocol";
import { toolFailure } from "@tapedeck/protocol";
import type { ResumedCall, ToolCallRequest, ToolOutcome, ToolSource } from "./tool-source.js";

/** Sends each call to the source of its tool's kind (host, mcp, builtin). */
export class SourceRouter implements ToolSource {
  constructor(private readonly sources: Partial<Record<ToolSourceKind, ToolSource>>) {}

  has(kind: ToolSourceKind): boolean {
    return this.sources[kind] !== undefined;
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
