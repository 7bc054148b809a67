import type { WorkerTools } from "./tool-handler.js";

/**
 * What `Tapedeck.embedded` (the SDK) and `@tapedeck/server/embedded` agree on. The SDK loads the
 * server's module by name, only when an embedded client is asked for, so neither package depends
 * on the other: the server opens an engine in this process and answers a connection (a `fetch`
 * that goes through its routes in memory, and the key it takes), and the SDK builds its client
 * over that connection.
 */

/** How `Tapedeck.embedded` opens its engine. */
export interface EmbeddedOptions {
  /** Data folder (the SQLite database). Default `./.tapedeck`. */
  readonly dataDir?: string;
  /**
   * Host tools served in this process, straight from the engine (no worker, no polling). Without
   * them, host tools are served by workers: `client.worker({ tools }).start()` on this client.
   */
  readonly hostTools?: WorkerTools;
  /** Durability of the store: `"full"` (default), `"normal"` or `"off"` (tests, throwaway data). */
  readonly durability?: "full" | "normal" | "off";
}

/** An engine open in this process, and how a client reaches it. */
export interface EmbeddedConnection {
  /** The base URL the client names: never resolved, since requests never leave the process. */
  readonly baseUrl: string;
  /** The key the connection's routes take: the application's own, unlimited. */
  readonly apiKey: string;
  /** A `fetch` into the server's routes, without a socket. */
  readonly fetch: (input: string, init: RequestInit) => Promise<Response>;
  /** Stops the engine (runs stay intact in the data folder and go on at the next open). */
  close(): Promise<void>;
}

/** What `@tapedeck/server/embedded` exports. */
export interface EmbeddedModule {
  openEmbedded(options: EmbeddedOptions): Promise<EmbeddedConnection>;
}
