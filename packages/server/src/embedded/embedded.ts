import type { HostToolContext, HostToolModule } from "@tapedeck/engine";
import { ToolError, type EmbeddedConnection, type EmbeddedModule, type WorkerTools } from "@tapedeck/protocol";
import { InProcessChannel } from "../http/in-process-channel.js";
import { resolveServeOptions, type ServeOptions } from "../runtime/serve-options.js";
import { openServerCore } from "../runtime/server-core.js";
import { inProcessFetch } from "./in-process-fetch.js";

/** The base URL an embedded client names: never resolved, since requests never leave the process. */
const EMBEDDED_URL = "http://tapedeck.embedded";

/**
 * An engine in this process, for the SDK's client (`Tapedeck.embedded` loads this and builds its
 * client over the connection): the same surface, no port, no network. Requests go through the
 * server's routes in memory, as an unlimited API key (the application itself); `namespace(userId)` narrows them as over HTTP.
 * With `hostTools`, those tools run in process; any other host tool waits for a worker of this
 * client (`client.worker({ tools }).start()`). Run-bound `webhook(name)` URLs point at
 * `http://tapedeck.embedded`, which nothing serves: deliver them with `runs.signal`.
 *
 * One process should open a data folder at a time (a `tapedeck serve` on the same folder would
 * execute the same runs).
 */
export const openEmbedded: EmbeddedModule["openEmbedded"] = (options) =>
  openInProcess({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.durability === undefined ? {} : { durability: options.durability }),
    ...(options.hostTools === undefined ? {} : { hostTools: inProcessTools(options.hostTools) }),
    // Inside an application: only what needs its attention (faults, failed webhook attempts, lost workers), not a line per call.
    logLevel: "warn",
  });

/**
 * The server's core without a socket, on any store `ServeOptions` names (a data folder or a store
 * URL), and a connection into its routes as an unlimited key: what `openEmbedded` answers the
 * SDK, and what `tapedeck mcp` builds its client over. No admin key is made.
 */
export async function openInProcess(options: ServeOptions): Promise<EmbeddedConnection> {
  const channel = new InProcessChannel();
  const core = await openServerCore(resolveServeOptions(options), { adminKey: false, inProcess: channel });
  try {
    await core.app.ready();
    await core.open(EMBEDDED_URL);
  } catch (error) {
    await core.close();
    throw error;
  }
  return { baseUrl: EMBEDDED_URL, apiKey: channel.key, fetch: inProcessFetch(core.app, channel), close: () => core.close() };
}

/**
 * The SDK's tool functions as the engine's: the context gains `tool` and an awaitable
 * `heartbeat` (nothing to keep in process), and a thrown error keeps a string `code` as a
 * worker's would (`ToolError`-shaped: code and message), so a tool fails alike either way.
 */
function inProcessTools(tools: WorkerTools): HostToolModule {
  return Object.fromEntries(
    Object.entries(tools).map(([group, fns]) => [
      group,
      Object.fromEntries(
        Object.entries(fns).map(([name, fn]) => [
          name,
          async (args: never, context: HostToolContext) => {
            try {
              return await fn(args, { ...context, tool: `${group}.${name}`, heartbeat: () => Promise.resolve() });
            } catch (error) {
              throw asToolError(error);
            }
          },
        ]),
      ),
    ]),
  );
}

function asToolError(error: unknown): unknown {
  if (ToolError.is(error) || typeof error !== "object" || error === null) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === "string" && code !== "" && typeof message === "string" ? new ToolError(code, message) : error;
}
