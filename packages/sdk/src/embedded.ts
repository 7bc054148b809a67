import type { Tapedeck } from "./client.js";
import type { WorkerTools } from "./worker/worker-types.js";

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

/** A client over an engine in this process: the client's whole surface, plus `close()`. */
export type EmbeddedTapedeck = Tapedeck & {
  /** Stops the engine (runs stay intact in the data folder and go on at the next open). */
  close(): Promise<void>;
};

/** What `@tapedeck/server/embedded` exports. */
interface EmbeddedModule {
  embedded(options: EmbeddedOptions): Promise<EmbeddedTapedeck>;
}

/**
 * The server package's module, loaded only when an embedded client is asked for: the SDK itself
 * never depends on the engine (QuickJS, TypeScript, SQLite), so a harness that talks to a server
 * installs none of it. The specifier is a variable so bundlers do not pull the engine in.
 */
const SERVER_EMBEDDED = "@tapedeck/server/embedded";

export async function loadEmbedded(): Promise<EmbeddedModule> {
  let loaded: unknown;
  try {
    loaded = await import(SERVER_EMBEDDED);
  } catch (error) {
    throw new Error(
      `Tapedeck.embedded needs the engine: install @tapedeck/server (npm install @tapedeck/server) next to @tapedeck/sdk. (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
  if (typeof (loaded as Partial<EmbeddedModule>).embedded !== "function")
    throw new Error(`${SERVER_EMBEDDED} has no embedded(): install a @tapedeck/server of the same version as @tapedeck/sdk.`);
  return loaded as EmbeddedModule;
}
