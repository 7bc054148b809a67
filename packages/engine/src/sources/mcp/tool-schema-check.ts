import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject, JsonValue, PinnedTool } from "@tapedeck/protocol";
import { SchemaValidator } from "../../util/schema-validator.js";
import { canonicalJson } from "../../util/canonical-json.js";
import type { Park } from "../tool-source.js";

/**
 * Whether a call still fits the tool its server offers now (seed 000: "the dispatcher checks
 * each call against the server's current schema"). A run pinned its tools when its toolset was
 * registered, maybe days ago; a tool that is gone, or whose new input schema the arguments no
 * longer fit, parks the call (`tool.schema_changed`) instead of sending it. A schema that
 * changed in a way the arguments still fit lets the call go.
 *
 * Invariants:
 * - Cheap on the hot path: each schema is canonicalised once (per pinned tool, per list read),
 *   so an unchanged tool costs a map look-up and a string comparison; the arguments are
 *   validated against the new schema only when it differs.
 * - Pure: the list comes from the caller (`McpConnection.currentTools`, one read per connection).
 */
export class ToolSchemaCheck {
  readonly #validator = new SchemaValidator();
  readonly #byName = new WeakMap<readonly Tool[], ReadonlyMap<string, Tool>>();
  readonly #canonical = new WeakMap<object, string>();
  /** The pinned tool with the server's current input schema, for validating arguments against it. */
  readonly #current = new WeakMap<PinnedTool, { readonly tool: Tool; readonly asPinned: PinnedTool }>();

  /** Why the call must wait for the harness (its tool changed under the run), or undefined to send it. */
  park(pinned: PinnedTool, remoteName: string, args: JsonValue, tools: readonly Tool[]): Park | undefined {
    const path = `${pinned.group}.${pinned.name}`;
    const now = this.#index(tools).get(remoteName);
    if (!now) {
      return {
        reason: "tool.schema_changed",
        message: `${path} is no longer offered by its MCP server (its tool list changed after the run's toolset was pinned).`,
      };
    }
    const current = this.#canonicalOf(now.inputSchema);
    if (current !== undefined && current === this.#canonicalOf(pinned.inputSchema)) return undefined;
    const failure = this.#validator.validateArgs(this.#withCurrentSchema(pinned, now), args);
    if (!failure) return undefined;
    return {
      reason: "tool.schema_changed",
      message: `The input schema of ${path} changed on its MCP server and the call's arguments no longer fit it: ${failure.message}`,
    };
  }

  #index(tools: readonly Tool[]): ReadonlyMap<string, Tool> {
    let index = this.#byName.get(tools);
    if (!index) {
      const byName = new Map<string, Tool>();
      // A name listed twice is compared with its first listing (pinning kept neither).
      for (const tool of tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
      this.#byName.set(tools, (index = byName));
    }
    return index;
  }

  /** Undefined when the schema has no canonical form (a hostile server's lone surrogate): it is then compared by validating. */
  #canonicalOf(schema: unknown): string | undefined {
    if (typeof schema !== "object" || schema === null) return JSON.stringify(schema);
    let text = this.#canonical.get(schema);
    if (text === undefined) {
      try {
        text = canonicalJson(schema as JsonObject);
      } catch {
        return undefined;
      }
      this.#canonical.set(schema, text);
    }
    return text;
  }

  #withCurrentSchema(pinned: PinnedTool, now: Tool): PinnedTool {
    const cached = this.#current.get(pinned);
    if (cached?.tool === now) return cached.asPinned;
    // A new object per list read: the validator compiles each schema once per object.
    const asPinned: PinnedTool = { ...pinned, inputSchema: now.inputSchema as JsonObject };
    this.#current.set(pinned, { tool: now, asPinned });
    return asPinned;
  }
}
