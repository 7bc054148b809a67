import type { Durability, HostToolModule } from "@tapedeck/engine";
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from "../webhooks/retry-schedule.js";

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
  /** Host tools run in this process; any other host tool is served by workers (`/v1/tasks`). Default: none (every host tool by workers). */
  readonly hostTools?: HostToolModule;
  /**
   * The URL the server's clients (and webhook senders) reach it at, when it is not the address
   * it listens on (behind a proxy). Run-bound webhook URLs point there. Default: the listening address.
   */
  readonly publicUrl?: string;
  /** Where the server writes what an operator must see (the admin key on first start, background faults). Default: stderr. */
  readonly log?: (line: string) => void;
  /** Webhooks out: the retry schedule (default: 8 attempts, 10 s then ×4 each time, at most 6 h apart) and how long one attempt may take (default 10 s). */
  readonly webhooks?: { readonly retry?: Partial<RetrySchedule>; readonly timeoutMs?: number };
  /**
   * TESTS ONLY, never in production: lets scripts' `fetch` reach loopback addresses (the
   * engine's `unsafeHttpAllowLoopbackForTests`), so a test can serve an allowed host locally.
   * Default false.
   */
  readonly unsafeHttpAllowLoopbackForTests?: boolean;
}

export interface ResolvedServeOptions {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly durability: Durability;
  readonly hostTools: HostToolModule | undefined;
  readonly publicUrl: string | undefined;
  readonly log: (line: string) => void;
  readonly webhooks: { readonly retry: RetrySchedule; readonly timeoutMs: number };
  readonly unsafeHttpAllowLoopbackForTests: boolean;
}

/** How long one webhook attempt may take: a receiver should answer at once and work later. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

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
    webhooks: { retry: { ...DEFAULT_RETRY_SCHEDULE, ...options.webhooks?.retry }, timeoutMs: options.webhooks?.timeoutMs ?? WEBHOOK_TIMEOUT_MS },
    unsafeHttpAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests === true,
  };
}
