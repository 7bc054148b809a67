import type { Durability, HostToolModule } from "@tapedeck/engine";

/** How `startServer` (and `tapedeck serve`) runs. Every field has a default. */
export interface ServeOptions {
  /** Port to listen on; 0 picks a free one. Default 7700. */
  readonly port?: number;
  /** Address to bind. Default `127.0.0.1`: loopback only, so exposing the server is a decision. */
  readonly host?: string;
  /** Data folder: the SQLite database and the server's signing secret. Default `./.tapedeck`. */
  readonly dataDir?: string;
  /** Durability of the store. Default `"full"`. */
  readonly durability?: Durability;
  /** Implementations of the toolsets' host tools, in this process. Default: none. */
  readonly hostTools?: HostToolModule;
  /**
   * The URL the server's clients (and webhook senders) reach it at, when it is not the address
   * it listens on (behind a proxy). Run-bound webhook URLs point there. Default: the listening address.
   */
  readonly publicUrl?: string;
  /** Where the server writes what an operator must see (the admin key on first start, background faults). Default: stderr. */
  readonly log?: (line: string) => void;
}

export interface ResolvedServeOptions {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly durability: Durability;
  readonly hostTools: HostToolModule | undefined;
  readonly publicUrl: string | undefined;
  readonly log: (line: string) => void;
}

export const DEFAULT_PORT = 7700;
export const DEFAULT_HOST = "127.0.0.1";

export function resolveServeOptions(options: ServeOptions): ResolvedServeOptions {
  return {
    port: options.port ?? DEFAULT_PORT,
    host: options.host ?? DEFAULT_HOST,
    dataDir: options.dataDir ?? ".tapedeck",
    durability: options.durability ?? "full",
    hostTools: options.hostTools,
    publicUrl: options.publicUrl?.replace(/\/+$/, ""),
    log: options.log ?? ((line) => process.stderr.write(`${line}\n`)),
  };
}
