import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { AddedTool, FixtureState } from "./fixture-state.js";

/**
 * `add_tool` / `remove_tool`: edit the tool list of every session of a fixture and announce it.
 *
 * `McpServer` sends `notifications/tools/list_changed` by itself on every registration and
 * removal, unrelated to any request. Over Streamable HTTP such a notification travels on the
 * session's GET stream and is silently dropped while that stream is not open yet (the client
 * opens it asynchronously after initializing). So the fixture switches the automatic
 * notifications off and sends exactly one per change and session: related to the `add_tool` /
 * `remove_tool` call for the session that made it (it arrives before the call's result), and
 * unrelated for every other connected session.
 */

type Kind = "base" | "added";
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
const EDIT_TOOLS = new Set(["add_tool", "remove_tool"]);

/** Keeps `server`'s tool list equal to `state`'s; returns the function that stops it. */
export function followToolListEdits(server: McpServer, state: FixtureState, base: Map<string, RegisteredTool>): () => void {
  server.sendToolListChanged = () => undefined;
  const registry = new Map<string, { kind: Kind; tool: RegisteredTool }>();
  for (const [name, tool] of base) registry.set(name, { kind: "base", tool });
  registerEditTools(server, state, (name) => base.has(name));
  const sync = (): void => syncToolList(server, state, registry);
  sync();
  return state.onToolListChanged((origin) => {
    sync();
    if (origin !== server && server.isConnected()) server.server.sendToolListChanged().catch(() => undefined);
  });
}

function syncToolList(server: McpServer, state: FixtureState, registry: Map<string, { kind: Kind; tool: RegisteredTool }>): void {
  for (const [name, entry] of registry) {
    const listed = entry.kind === "base" ? !state.removed.has(name) && !state.added.has(name) : state.added.has(name);
    if (listed) continue;
    entry.tool.remove();
    registry.delete(name);
  }
  for (const [name, added] of state.added) {
    if (!registry.has(name)) registry.set(name, { kind: "added", tool: registerAddedTool(server, name, added) });
  }
}

function registerAddedTool(server: McpServer, name: string, added: AddedTool): RegisteredTool {
  const required = Object.fromEntries(added.requires.map((arg) => [arg, z.string().describe("Required by add_tool's `requires`.")]));
  const config = {
    description: `Added by add_tool; ${added.hang ? "never answers" : "echoes its text"}.`,
    inputSchema: { text: z.string().optional(), ...required },
  };
  return server.registerTool(name, config, ({ text }) =>
    added.hang ? never : { content: [{ type: "text" as const, text: `${name}: ${typeof text === "string" ? text : ""}` }] },
  );
}

const never = new Promise<never>(() => undefined);

function registerEditTools(server: McpServer, state: FixtureState, isBase: (name: string) => boolean): void {
  const input = { name: z.string().min(1).describe("Tool name.") };
  const addInput = {
    ...input,
    requires: z
      .array(z.string().min(1))
      .default([])
      .describe("String arguments the added tool requires besides `text`: calls written for an older schema no longer fit."),
    hang: z.boolean().default(false).describe("The added tool never answers (instead of echoing)."),
  };
  const edit =
    (verb: "add" | "remove") =>
    async ({ name, requires = [], hang = false }: { name: string; requires?: string[]; hang?: boolean }, extra: Extra) => {
      const changed =
        !EDIT_TOOLS.has(name) && (verb === "add" ? state.addTool(name, isBase, server, { requires, hang }) : state.removeTool(name, isBase, server));
      if (!changed) {
        const why = EDIT_TOOLS.has(name) ? "cannot be edited" : verb === "add" ? "is listed already" : "is not listed";
        return { content: [{ type: "text" as const, text: `tool ${JSON.stringify(name)} ${why}` }], isError: true };
      }
      await extra.sendNotification({ method: "notifications/tools/list_changed" });
      return { content: [{ type: "text" as const, text: `${verb === "add" ? "added" : "removed"} ${name}` }] };
    };
  server.registerTool("add_tool", { description: "Adds a tool that echoes its text, then announces the change.", inputSchema: addInput }, edit("add"));
  server.registerTool("remove_tool", { description: "Removes a tool, then announces the change.", inputSchema: input }, edit("remove"));
}
