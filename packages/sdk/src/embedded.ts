import type { EmbeddedModule } from "@tapedeck/protocol";
import type { Tapedeck } from "./client.js";

/** How `Tapedeck.embedded` opens its engine (the protocol's: `@tapedeck/server/embedded` takes the same). */
export type { EmbeddedOptions } from "@tapedeck/protocol";

/** A client over an engine in this process: the client's whole surface, plus `close()`. */
export type EmbeddedTapedeck = Tapedeck & {
  /** Stops the engine (runs stay intact in the data folder and go on at the next open). */
  close(): Promise<void>;
};

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
  if (typeof (loaded as Partial<EmbeddedModule>).openEmbedded !== "function")
    throw new Error(`${SERVER_EMBEDDED} has no openEmbedded(): install a @tapedeck/server of the same version as @tapedeck/sdk.`);
  return loaded as EmbeddedModule;
}
