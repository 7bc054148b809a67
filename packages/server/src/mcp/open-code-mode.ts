import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CreateToolsetRequest, Labels } from "@tapedeck/protocol/api";
import { Tapedeck } from "@tapedeck/sdk";
import { openInProcess } from "../embedded/embedded.js";
import type { ServeOptions } from "../runtime/serve-options.js";
import { codeModeSession } from "./code-mode-session.js";
import { RunWatch } from "./run-progress.js";

export interface CodeModeOptions {
  /** The store and how the core runs (`dataDir`, `store`, `logLevel`…), as for `tapedeck serve`; no socket is opened. */
  readonly serve: ServeOptions;
  /** A toolset file's contents (registered here: content-addressed, so again is free) or the id of a registered toolset. */
  readonly toolset: CreateToolsetRequest | string;
  /** The end user the runs belong to: the namespace every request acts in. */
  readonly namespace: string;
  /** Set on every run started; `list_runs` and the run ids the tools accept are limited to them. Default: none. */
  readonly labels?: Labels;
  /** The server's name and version in `initialize`. */
  readonly serverInfo: { readonly name: string; readonly version: string };
  /** Where faults are reported. */
  readonly logFault: (message: string) => void;
}

export interface CodeMode {
  /** The MCP server, to connect to a transport. */
  readonly server: Server;
  /** The toolset the tools run against. */
  readonly toolset: string;
  /** Closes the MCP server, then the core (runs stay in the store and go on at the next open). */
  close(): Promise<void>;
}

/**
 * Opens the core in this process (as `openEmbedded` does) and an MCP server in code mode over it:
 * the agent tools through a client acting for `namespace`, the toolset's declarations in the
 * instructions. The session id is new on each open: a request id is unique only in one session.
 */
export async function openCodeMode(options: CodeModeOptions): Promise<CodeMode> {
  const connection = await openInProcess(options.serve);
  try {
    const watch = new RunWatch();
    const local = new Tapedeck({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, fetch: watch.fetch(connection.fetch) });
    // Registered as the operator who gave the file (its stdio servers are commands only an unlimited key may run); the model acts for `namespace`.
    const toolset = typeof options.toolset === "string" ? options.toolset : (await local.toolsets.create(options.toolset)).id;
    const server = await codeModeSession({
      client: local.namespace(options.namespace),
      watch,
      toolset,
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      sessionId: randomUUID(),
      serverInfo: options.serverInfo,
      logFault: options.logFault,
    });
    return {
      server,
      toolset,
      close: async () => {
        await server.close();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
