import { quotaProblems, type Quotas } from "../quotas/run-quotas.js";
import type { Durability, EngineOptions, HostToolModule } from "@tapedeck/engine";
import { WORKER_LOST_AFTER_MS } from "../host-tasks/worker-presence.js";
import { DEFAULT_MAX_MCP_SESSIONS, DEFAULT_MAX_MCP_SESSIONS_PER_OWNER, DEFAULT_MCP_SESSION_IDLE_MS, type McpSessionLimits } from "../mcp/http-sessions.js";
import { createServerLogger, defaultLogFormat, type LogFormat, type LogLevel, type ServerLogger } from "../logging/server-logger.js";
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from "../webhooks/retry-schedule.js";

/** How `startServer` (and `tapedeck serve`) runs. Every field has a default. */
export interface ServeOptions {
  /** Port to listen on; 0 picks a free one. Default 7700. */
  readonly port?: number;
  /** Address to bind. Default `127.0.0.1`: loopback only, so exposing the server is a decision. */
  readonly host?: string;
  /** Data folder: the SQLite database (unless `store` is elsewhere) and the server's signing secret. Default `./.tapedeck`. */
  readonly dataDir?: string;
  /**
   * Where runs, API keys and the webhook outbox are kept: a data folder or a store URL
   * (`postgres://user:password@host:5432/database?schema=name`: several servers may share it).
   * Default: the data folder (`dataDir`).
   */
  readonly store?: string;
  /**
   * A file holding the server's signing secret (64 hex characters), when `TAPEDECK_SIGNING_SECRET`
   * is not set: nodes on one store URL must share it (`shared-secrets.ts`). Default: the
   * environment variable, else `<data>/server-secret` (a store in the data folder only).
   */
  readonly signingSecretFile?: string;
  /** Durability of the store. Default `"full"`. */
  readonly durability?: Durability;
  /** Host tools run in this process; any other host tool is served by workers (`/v1/tasks`). Default: none (every host tool by workers). */
  readonly hostTools?: HostToolModule;
  /**
   * The URL the server's clients (and webhook senders) reach it at, when it is not the address
   * it listens on (behind a proxy). Run-bound webhook URLs point there. Default: the listening address.
   */
  readonly publicUrl?: string;
  /**
   * The log's level: one line per request and per run started, parked or ended, worker
   * connected or lost at `info`; webhook attempts that failed and faults at `warn` and `error`;
   * `silent` logs nothing. Default `"info"`.
   */
  readonly logLevel?: LogLevel;
  /** `"json"` (one pino object per line) or `"pretty"` (one line for people). Default: pretty when stderr is a terminal, JSON otherwise. */
  readonly logFormat?: LogFormat;
  /** Where each log line goes (without its newline). Default: stderr. */
  readonly log?: (line: string) => void;
  /** How long a worker may go without polling, heartbeating or answering before the log says it is lost, ms. Default 60 s. */
  readonly workerLostAfterMs?: number;
  /**
   * How long the lease of a run this server executes or holds lasts without renewal, ms: with
   * several servers on one store, the others take its runs over once it lapses (at once when it
   * stops cleanly). Default 30 s (`EngineOptions.leaseMs`).
   */
  readonly leaseMs?: number;
  /**
   * How long ended runs (and direct sessions unused, and done webhook deliveries) are kept, ms: a
   * background sweep deletes them past it (`retention/retention-sweeper.ts`). Default: kept for ever.
   */
  readonly retentionMs?: number;
  /** Between two retention sweeps, ms. Default `RETENTION_SWEEP_MS` (a minute). */
  readonly retentionSweepMs?: number;
  /**
   * Quotas on starting runs, per namespace and per API key (`quotas/run-quotas.ts`): runs in
   * progress at once, runs started per minute and per day. Over one, a start answers 429 with
   * `Retry-After`. Default: none.
   */
  readonly quotas?: Quotas;
  /** Webhooks out: the retry schedule (default: 8 attempts, 10 s then ×4 each time, at most 6 h apart) and how long one attempt may take (default 10 s). */
  readonly webhooks?: { readonly retry?: Partial<RetrySchedule>; readonly timeoutMs?: number };
  /**
   * TESTS ONLY, never in production: lets scripts' `fetch` reach loopback addresses (the
   * engine's `unsafeHttpAllowLoopbackForTests`), so a test can serve an allowed host locally.
   * Default false.
   */
  readonly unsafeHttpAllowLoopbackForTests?: boolean;
  /**
   * Other test-only switches the host turned on (`tapedeck serve`: its `TAPEDECK_TEST_…`
   * variables), each as "NAME: what it does". The server says every switch on, these and
   * `unsafeHttpAllowLoopbackForTests`, in a warning at start and in every `/health` answer.
   * Default: none.
   */
  readonly unsafeSwitches?: readonly string[];
  /**
   * The ceilings on user tools' per-tool limits (`fuel`, `deadlineMs`, `memoryBytes`, …): a
   * toolset or `save_tool` asking for more is refused, naming the ceiling (the engine's
   * `userToolCeilings`; `tapedeck serve --user-tool-ceilings deadlineMs=60000` or
   * `TAPEDECK_USER_TOOL_CEILINGS=deadlineMs=60000,memoryBytes=67108864`). Default: the engine's.
   */
  readonly userToolCeilings?: EngineOptions["userToolCeilings"];
  /**
   * `/mcp`'s sessions: how many may be open at once (default `DEFAULT_MAX_MCP_SESSIONS`, 1000;
   * `tapedeck serve --mcp-max-sessions`), how many of them one key (or its tokens) for one end
   * user (default 100; `--mcp-max-sessions-per-key`), and how long one lives unused, ms (default
   * 30 minutes; `--mcp-session-idle 10m`).
   */
  readonly mcpSessions?: Partial<McpSessionLimits>;
}

export interface ResolvedServeOptions {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly store: string;
  readonly durability: Durability;
  readonly signingSecretFile: string | undefined;
  readonly hostTools: HostToolModule | undefined;
  readonly publicUrl: string | undefined;
  readonly logger: ServerLogger;
  readonly workerLostAfterMs: number;
  readonly leaseMs: number | undefined;
  readonly retentionMs: number | undefined;
  readonly retentionSweepMs: number | undefined;
  readonly quotas: Quotas;
  readonly webhooks: { readonly retry: RetrySchedule; readonly timeoutMs: number };
  readonly unsafeHttpAllowLoopbackForTests: boolean;
  /** Every test-only switch on, with what it does (empty in production). */
  readonly unsafeSwitches: readonly string[];
  readonly userToolCeilings: EngineOptions["userToolCeilings"];
  readonly mcpSessions: McpSessionLimits;
}

/** How long one webhook attempt may take: a receiver should answer at once and work later. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** How the loopback switch is said (at start, in /health). */
export const LOOPBACK_SWITCH =
  "unsafeHttpAllowLoopbackForTests (TAPEDECK_UNSAFE_TEST_HTTP_ALLOW_LOOPBACK=1): scripts' fetch may reach this machine's loopback addresses, this server's own port included";

export const DEFAULT_PORT = 7700;
export const DEFAULT_HOST = "127.0.0.1";

export function resolveServeOptions(options: ServeOptions): ResolvedServeOptions {
  return {
    port: options.port ?? DEFAULT_PORT,
    host: options.host ?? DEFAULT_HOST,
    dataDir: options.dataDir ?? ".tapedeck",
    store: options.store ?? options.dataDir ?? ".tapedeck",
    durability: options.durability ?? "full",
    signingSecretFile: options.signingSecretFile,
    hostTools: options.hostTools,
    publicUrl: options.publicUrl?.replace(/\/+$/, ""),
    logger: createServerLogger({
      level: options.logLevel ?? "info",
      format: options.logFormat ?? defaultLogFormat(),
      write: options.log ?? ((line) => process.stderr.write(`${line}\n`)),
    }),
    workerLostAfterMs: options.workerLostAfterMs ?? WORKER_LOST_AFTER_MS,
    leaseMs: options.leaseMs,
    retentionMs: options.retentionMs,
    retentionSweepMs: options.retentionSweepMs,
    quotas: checkedQuotas(options.quotas ?? {}),
    webhooks: { retry: { ...DEFAULT_RETRY_SCHEDULE, ...options.webhooks?.retry }, timeoutMs: options.webhooks?.timeoutMs ?? WEBHOOK_TIMEOUT_MS },
    unsafeHttpAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests === true,
    unsafeSwitches: [
      ...(options.unsafeHttpAllowLoopbackForTests === true ? [LOOPBACK_SWITCH] : []),
      ...(options.unsafeSwitches ?? []).filter((text) => text !== LOOPBACK_SWITCH),
    ],
    userToolCeilings: options.userToolCeilings,
    mcpSessions: {
      maxSessions: options.mcpSessions?.maxSessions ?? DEFAULT_MAX_MCP_SESSIONS,
      maxPerOwner: options.mcpSessions?.maxPerOwner ?? DEFAULT_MAX_MCP_SESSIONS_PER_OWNER,
      idleMs: options.mcpSessions?.idleMs ?? DEFAULT_MCP_SESSION_IDLE_MS,
    },
  };
}

/** The quotas, refused at start with every wrong field named. */
function checkedQuotas(quotas: Quotas): Quotas {
  const problems = quotaProblems(quotas);
  if (problems.length > 0) throw new TypeError(`ServeOptions.quotas is wrong: ${problems.join("; ")}.`);
  return quotas;
}
