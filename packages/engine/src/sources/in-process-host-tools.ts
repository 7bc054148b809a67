import { ToolError, toolFailure, type JsonValue, type PinnedTool } from "@tapedeck/protocol";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "./tool-source.js";

/** What a host tool implementation receives besides its arguments. */
export interface HostToolContext {
  /** `{run_id}/{seq}`, the same on every attempt: use it to avoid repeating an effect. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly seq: number;
  /** 1 for the first attempt, more after interruptions. */
  readonly attempt: number;
  /** Aborted when the attempt times out or the run stops wanting the result. */
  readonly signal: AbortSignal;
  /** W3C trace context of the call. */
  readonly traceparent: string;
  /** Tells the engine the tool is still working (meaningful for remote workers; a no-op in process). */
  heartbeat(): void;
}

export type HostToolFunction = (args: never, context: HostToolContext) => unknown;

/** A host tool module: `{ <group>: { <name>: async (args, ctx) => result } }`. */
export type HostToolModule = Readonly<Record<string, Readonly<Record<string, HostToolFunction>>>>;

/**
 * Host tools implemented by functions in this process (`--host ./tools.ts`). A function that
 * throws answers with a failure (a `ToolError`'s code, else `tool_error`): it is not an
 * interruption, so it is never retried.
 */
export class InProcessHostTools implements ToolSource {
  constructor(private readonly module: HostToolModule) {}

  /** The `group.name` of every tool of `tools` that this module does not implement. */
  missing(tools: readonly { group: string; name: string; source: string }[]): string[] {
    return tools.filter((t) => t.source === "host" && this.#implementation(t.group, t.name) === undefined).map((t) => `${t.group}.${t.name}`);
  }

  check(tools: readonly PinnedTool[]): string | undefined {
    const missing = this.missing(tools);
    if (missing.length === 0) return undefined;
    return `The host module does not implement ${missing.join(", ")}: export { <group>: { <name>: async (args, ctx) => result } } for every host tool of the toolset.`;
  }

  /**
   * The module's own function for `group.name`. Own properties only: a tool named `constructor`
   * or `toString` that the module does not define is missing, never `Object.prototype`'s.
   */
  #implementation(group: string, name: string): HostToolFunction | undefined {
    const tools = Object.hasOwn(this.module, group) ? this.module[group] : undefined;
    const fn = tools !== undefined && Object.hasOwn(tools, name) ? tools[name] : undefined;
    return typeof fn === "function" ? fn : undefined;
  }

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    // This process is the worker: the call is taken at once, and its timeout (if any) starts now.
    request.queue?.taken();
    const { group, name } = request.tool;
    const fn = this.#implementation(group, name);
    if (fn === undefined) {
      return { kind: "failure", failure: toolFailure("tool_error", `The host module has no implementation of ${group}.${name}.`) };
    }
    const context: HostToolContext = {
      idempotencyKey: request.idempotencyKey,
      runId: request.runId,
      seq: request.seq,
      attempt: request.attempt,
      signal: request.signal,
      traceparent: request.traceparent,
      heartbeat: () => {},
    };
    try {
      const value = await fn(request.args as never, context);
      return { kind: "result", value: toJson(value) };
    } catch (error) {
      return { kind: "failure", failure: failureOf(error) };
    }
  }
}

function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

function failureOf(error: unknown) {
  if (ToolError.is(error)) return error.toFailure();
  const message = error instanceof Error ? error.message : String(error);
  return toolFailure("tool_error", message);
}
