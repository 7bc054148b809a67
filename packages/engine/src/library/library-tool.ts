import type { JsonValue, ToolFailure } from "@tapedeck/protocol";
import type { Workspace } from "./files/workspace.js";
import type { MemorySpace } from "./memory/memory-space.js";
import type { ToolDefinition } from "./tool-definition.js";
import type { GuardedFetch } from "./web/guarded-fetch.js";
import type { HtmlConverter } from "./web/html-converter.js";

/**
 * A tool of the built-in library: its definition (data) plus `execute`. What `execute` may touch
 * is what its context holds, and its context holds only the capabilities the tool names in
 * `needs` — so `files.read` cannot reach the network and `time.now` cannot reach a workspace,
 * by type and by construction (the engine builds each context from `needs`).
 *
 * Invariants:
 * - `execute` is called with arguments the engine validated against `inputSchema` already.
 * - Expected outcomes come back as a `ToolResult` (a failure is data with a `code`); a throw is a
 *   bug in the tool, which `callLibraryTool` turns into a `tool_error` failure.
 * - `execute` reads time only from `ctx.now` (virtual in tests, the run's clock when wired) and
 *   stops when `ctx.signal` aborts (the attempt timed out, or the run stopped waiting).
 */

/** What a library tool may be given, by name. */
export interface Capabilities {
  /** The namespace's workspace folder (files, shell). */
  readonly workspace: Workspace;
  /** Requests through the `http` tool's rules: allow-list, SSRF checks, pinned address, 5 MiB / 30 s (web). */
  readonly fetch: GuardedFetch;
  /** The namespace's memory documents and their index (memory). */
  readonly memory: MemorySpace;
  /** Converts HTML to Markdown off the engine's event loop, bounded in time and memory (web). */
  readonly html: HtmlConverter;
}

export type Capability = keyof Capabilities;

/** What every tool gets, whatever it needs. */
export interface BaseContext {
  /** Milliseconds since the Unix epoch, from the run's clock. */
  readonly now: () => number;
  /** Aborted when the attempt times out or the run no longer wants the result. */
  readonly signal: AbortSignal;
}

export type ToolContext<C extends Capability = never> = BaseContext & Pick<Capabilities, C>;

export type ToolResult =
  /** The tool's answer. */
  | { readonly kind: "result"; readonly value: JsonValue }
  /** The tool refused or could not do it; the script gets a `ToolError` with this code. */
  | { readonly kind: "failure"; readonly failure: ToolFailure };

export interface LibraryTool<C extends Capability = Capability> extends ToolDefinition {
  /** The capabilities `execute` gets in its context. */
  readonly needs: readonly C[];
  execute(args: JsonValue, ctx: ToolContext<C>): Promise<ToolResult>;
}

/**
 * A library tool whose `execute` takes its arguments typed as `Args` — the type its
 * `inputSchema` describes (the engine validated them against it before the call).
 */
export function defineTool<Args, C extends Capability = never>(
  tool: ToolDefinition & { readonly needs: readonly C[]; execute(args: Args, ctx: ToolContext<C>): Promise<ToolResult> },
): LibraryTool<C> {
  return { ...tool, execute: (args, ctx) => tool.execute(args as Args, ctx) };
}

/** A result. */
export function result(value: JsonValue): ToolResult {
  return { kind: "result", value };
}

/** A failure with `code` and a message written for whoever must act on it (often the model). */
export function failure(code: ToolFailure["code"], message: string, details?: JsonValue): ToolResult {
  return { kind: "failure", failure: details === undefined ? { code, message } : { code, message, details } };
}
