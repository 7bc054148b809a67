import { setTimeout as delay } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestId, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { imageResult, mixedResult, text } from "./content-samples.js";
import { registerEffectTools } from "./effect-tools.js";
import { FixtureState } from "./fixture-state.js";
import { registerManyTools } from "./many-tools.js";
import { paginateToolsList } from "./paginate-tools-list.js";
import { followToolListEdits } from "./tool-list-edits.js";

/**
 * The fixture MCP server of Tapedeck's tests, written with the official SDK: one tool per
 * behaviour a tool source must handle (structured and plain results, slowness, cancellation,
 * errors, every content kind, idempotent effects, huge results, dropped connections, a changing
 * tool list, many tools, awkward names, a paginated list). Transports live in `stdio-main.ts`
 * and `http-fixture.ts`.
 */

export interface FixtureServerOptions {
  /** Adds `op_0 … op_{n-1}` with small realistic schemas. Default 0. */
  manyTools?: number;
  /** Adds echo tools under these names, which need not be identifiers ("list-items"). Default none. */
  names?: readonly string[];
  /** Adds echo tools under these names annotated `readOnlyHint: true` (reads of an API, as seed 002's flat tables have). Default none. */
  readOnlyNames?: readonly string[];
  /** Answers `tools/list` in pages of this size. Default: one page. */
  paginate?: number;
  /** State shared by every session of one fixture (effects ledger, tool-list edits). Default: a new one. */
  state?: FixtureState;
  /** How `drop()` cuts the connection of its call. Default: none, and `drop()` answers isError. */
  dropConnection?: (requestId: RequestId, stage: DropStage) => void;
}

/** When an HTTP `drop()` destroys the socket. */
export const DROP_STAGES = [
  /** Before the response starts: the client's POST fails ("fetch failed"). */
  "before-response",
  /** After the response headers (an SSE stream) went out: the stream breaks mid-call. */
  "mid-stream",
] as const;
export type DropStage = (typeof DROP_STAGES)[number];

/** Megabytes `huge()` returns when `mb` is omitted. */
export const HUGE_DEFAULT_MB = 50;

const never = new Promise<never>(() => undefined);

export function createFixtureServer(options: FixtureServerOptions = {}): McpServer {
  const server = new McpServer({ name: "tapedeck-fixture", version: "1.0.0" });
  if (options.paginate !== undefined) paginateToolsList(server, options.paginate);
  const state = options.state ?? new FixtureState();
  const base = new Map<string, RegisteredTool>();
  const add: Add = (name, tool) => void base.set(name, tool);
  registerResultTools(server, add);
  registerTimingTools(server, add);
  registerEffectTools(server, state, add);
  // `drop({ vanish: true })` takes itself off every session's list first, as a redeployed server would.
  registerFaultTools(server, add, options.dropConnection, () => state.removeTool("drop", (name) => base.has(name), server));
  for (const [name, tool] of registerManyTools(server, options.manyTools ?? 0)) add(name, tool);
  for (const name of options.names ?? []) add(name, registerNamedEcho(server, name));
  for (const name of options.readOnlyNames ?? []) add(name, registerNamedEcho(server, name, { readOnlyHint: true }));
  const stop = followToolListEdits(server, state, base);
  const onclose = server.server.onclose;
  server.server.onclose = () => {
    stop();
    onclose?.();
  };
  return server;
}

/** Records a base tool (one `remove_tool` may remove). */
type Add = (name: string, tool: RegisteredTool) => void;

function registerResultTools(server: McpServer, add: Add): void {
  add(
    "echo",
    server.registerTool(
      "echo",
      {
        description: "Returns its text, as structured content and as a text block.",
        inputSchema: { text: z.string() },
        outputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      ({ text: value }) => ({ content: [text(value)], structuredContent: { text: value } }),
    ),
  );
  add(
    "echo_plain",
    server.registerTool(
      "echo_plain",
      {
        description: "Returns its text as a text block only (no output schema).",
        inputSchema: { text: z.string() },
      },
      ({ text: value }) => ({ content: [text(value)] }),
    ),
  );
  add(
    "fail",
    server.registerTool(
      "fail",
      {
        description: "Answers a tool error (isError) carrying `message`.",
        inputSchema: { message: z.string() },
      },
      ({ message }) => ({ content: [text(message)], isError: true }),
    ),
  );
  add("image", server.registerTool("image", { description: "Returns a small PNG and a caption." }, imageResult));
  add(
    "mixed",
    server.registerTool(
      "mixed",
      {
        description: "Returns text, audio, a resource link and an embedded binary resource.",
      },
      mixedResult,
    ),
  );
}

function registerTimingTools(server: McpServer, add: Add): void {
  add(
    "slow",
    server.registerTool(
      "slow",
      {
        description: "Answers after `ms` milliseconds; stops early when the call is cancelled.",
        inputSchema: { ms: z.number().int().min(0) },
      },
      async ({ ms }, extra) => {
        await delay(ms, undefined, { signal: extra.signal });
        return { content: [text(`slept ${ms} ms`)] };
      },
    ),
  );
  add(
    "hang",
    server.registerTool("hang", { description: "Never answers." }, () => never),
  );
}

function registerFaultTools(server: McpServer, add: Add, dropConnection: FixtureServerOptions["dropConnection"], vanish: () => void): void {
  add(
    "huge",
    server.registerTool(
      "huge",
      {
        description: `Returns one text block of \`mb\` MiB (default ${HUGE_DEFAULT_MB}).`,
        inputSchema: { mb: z.number().positive().max(1024).default(HUGE_DEFAULT_MB) },
      },
      ({ mb }) => ({ content: [text("x".repeat(Math.round(mb * 1024 * 1024)))] }),
    ),
  );
  add(
    "drop",
    server.registerTool(
      "drop",
      {
        description: "Cuts the connection in the middle of the call (over stdio the server process exits).",
        inputSchema: {
          stage: z.enum(DROP_STAGES).default("mid-stream").describe("HTTP only: before the response starts, or after its headers."),
          vanish: z.boolean().default(false).describe("HTTP only: first remove `drop` from the tool list, so a call sent again finds it gone."),
        },
      },
      ({ stage, vanish: gone }, extra) => {
        if (dropConnection === undefined) return { content: [text("this host cannot drop connections")], isError: true };
        if (gone) vanish();
        dropConnection(extra.requestId, stage);
        return never;
      },
    ),
  );
}

function registerNamedEcho(server: McpServer, name: string, annotations?: ToolAnnotations): RegisteredTool {
  return server.registerTool(
    name,
    {
      description:
        annotations?.readOnlyHint === true
          ? `Reads: answers its text as it is (${name}, read-only).`
          : `Echoes its text; its name, ${JSON.stringify(name)}, is not an identifier.`,
      inputSchema: { text: z.string() },
      ...(annotations === undefined ? {} : { annotations }),
    },
    ({ text: value }) => ({ content: [text(value)] }),
  );
}
