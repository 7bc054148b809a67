import type { ServerLogger } from "../logging/server-logger.js";
import { resolveServeOptions, type ServeOptions } from "./serve-options.js";
import { openServerCore, type ServerCore } from "./server-core.js";

export interface RunningServer {
  /** Where the server listens, such as `http://127.0.0.1:7700`. */
  readonly url: string;
  /** The admin API key, when this start created it (the data folder's first): shown once, never stored, never logged. */
  readonly adminKey?: string;
  /** The server's log: whoever hosts the server says more in the same stream, level and format (`tapedeck serve` its stop). */
  readonly logger: ServerLogger;
  /** Stops taking requests, answers held ones, records the webhook attempts in flight, then closes the engine (runs and pending deliveries stay intact and go on at the next start). */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server on one engine over the data folder's SQLite store. In order: the
 * store opens (and migrates), the admin key is created if the folder has no key, the server
 * listens, then the engine opens with webhook URLs pointing at the address it got, webhooks
 * start (deliveries a previous process left pending go out), and the runs a previous process
 * left `running` start being resumed, in the background (the log says once, at the end, how
 * many were resumed and how many other live nodes hold). Until the engine is open, `/v1`
 * answers 503 and `GET /health` says `starting`.
 *
 * Fails (closing what it opened) if the store cannot be opened or the port is taken.
 */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const resolved = resolveServeOptions(options);
  const core = await openServerCore(resolved, { adminKey: true });
  try {
    const address = await listen(core, resolved);
    if (resolved.publicUrl === undefined && /^(0\.0\.0\.0|::|\[::\])$/.test(resolved.host)) {
      resolved.logger.warn(
        `listening on every address; run-bound webhook URLs will point at ${address}. Pass --public-url <the URL clients reach this server at>.`,
      );
    }
    await core.open(resolved.publicUrl ?? address);
    return { url: address, ...(core.adminKey ? { adminKey: core.adminKey } : {}), logger: resolved.logger, close: () => core.close() };
  } catch (error) {
    await core.close();
    throw error;
  }
}

async function listen(core: ServerCore, options: { readonly host: string; readonly port: number }): Promise<string> {
  try {
    return await core.app.listen({ port: options.port, host: options.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new Error(`Port ${options.port} on ${options.host} is in use (another tapedeck serve?). Stop it, or pass --port <n> (0 picks a free port).`);
    if (code === "EADDRNOTAVAIL")
      throw new Error(`Cannot listen on ${options.host}: this machine has no such address. Pass --host 127.0.0.1, or an address of this machine.`);
    throw error;
  }
}
