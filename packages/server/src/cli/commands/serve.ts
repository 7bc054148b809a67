import { quotaProblems } from "../../quotas/run-quotas.js";
import { parseDuration } from "@tapedeck/protocol";
import { startServer } from "../../runtime/start-server.js";
import { LOG_FORMATS, LOG_LEVELS } from "../../logging/server-logger.js";
import { optionalFlag, parse, UsageError } from "../args.js";
import { loadHostModule } from "../load-host-module.js";
import type { Output } from "../print.js";
import { announceAdminKey } from "../admin-key-notice.js";
import { sendWarnings } from "../process-warnings.js";
import { parseUserToolCeilings, USER_TOOL_CEILINGS_ENV } from "../user-tool-ceilings.js";
import { isStoreUrl, storeLocation } from "../store-location.js";

/**
 * Runs the HTTP server until SIGINT or SIGTERM. Prints `tapedeck listening on <url>` on stdout
 * once it takes requests (with `--port 0`, the port it got); on a store's first start the admin
 * API key goes on stdout when it is a terminal, else into `<data>/admin-key` (0600), never into
 * the log (`admin-key-notice.ts`). The log goes to stderr (`--log-level`, `--log-format`), and
 * every line on it is in that format (Node's warnings and the stop included). The store is
 * `--store`, else `TAPEDECK_STORE`, else the data folder (`store-location.ts`).
 */
export async function serveCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    port: { type: "string" },
    host: { type: "string" },
    "host-module": { type: "string" },
    "public-url": { type: "string" },
    "log-level": { type: "string" },
    "log-format": { type: "string" },
    store: { type: "string" },
    "signing-secret-file": { type: "string" },
    "lease-ms": { type: "string" },
    retention: { type: "string" },
    "user-tool-ceilings": { type: "string" },
    "namespace-quotas": { type: "string" },
    "key-quotas": { type: "string" },
    "mcp-max-sessions": { type: "string" },
    "mcp-max-sessions-per-key": { type: "string" },
    "mcp-session-idle": { type: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = parsePort(optionalFlag(values.port, "port"));
  const host = optionalFlag(values.host, "host");
  const publicUrl = optionalFlag(values["public-url"], "public-url");
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(publicUrl))
    throw new UsageError("--public-url must be an http(s) URL such as https://tapedeck.example.com");
  const logLevel = oneOf(optionalFlag(values["log-level"], "log-level"), LOG_LEVELS, "--log-level");
  const logFormat = oneOf(optionalFlag(values["log-format"], "log-format"), LOG_FORMATS, "--log-format");
  const modulePath = optionalFlag(values["host-module"], "host-module");
  const hostTools = modulePath === undefined ? undefined : await loadHostModule(modulePath);
  const retryBaseMs = testMs(process.env[TEST_RETRY_BASE_ENV], TEST_RETRY_BASE_ENV);
  const workerLostMs = testMs(process.env[TEST_WORKER_LOST_ENV], TEST_WORKER_LOST_ENV);
  const leaseMs = leaseOption(optionalFlag(values["lease-ms"], "lease-ms"));
  const retentionMs = retentionOption(optionalFlag(values.retention, "retention"));
  const retentionSweepMs = testMs(process.env[TEST_RETENTION_SWEEP_ENV], TEST_RETENTION_SWEEP_ENV);
  const store = storeLocation(optionalFlag(values.store, "store"), values.data);
  const signingSecretFile = optionalFlag(values["signing-secret-file"], "signing-secret-file");
  const ceilingsFlag = optionalFlag(values["user-tool-ceilings"], "user-tool-ceilings");
  const userToolCeilings =
    ceilingsFlag === undefined
      ? parseUserToolCeilings(process.env[USER_TOOL_CEILINGS_ENV], USER_TOOL_CEILINGS_ENV)
      : parseUserToolCeilings(ceilingsFlag, "--user-tool-ceilings");
  // The same name=value syntax as the ceilings; the names and values are checked (and named) by the server's options.
  const perNamespace = parseUserToolCeilings(optionalFlag(values["namespace-quotas"], "namespace-quotas"), "--namespace-quotas");
  const perKey = parseUserToolCeilings(optionalFlag(values["key-quotas"], "key-quotas"), "--key-quotas");
  const quotas = { ...(perNamespace === undefined ? {} : { perNamespace }), ...(perKey === undefined ? {} : { perKey }) };
  const quotaProblem = quotaProblems(quotas);
  if (quotaProblem.length > 0)
    throw new UsageError(
      quotaProblem
        .join("; ")
        .replace(/quotas\.perNamespace/g, "--namespace-quotas")
        .replace(/quotas\.perKey/g, "--key-quotas"),
    );
  const mcpSessions = mcpSessionOptions(
    optionalFlag(values["mcp-max-sessions"], "mcp-max-sessions"),
    optionalFlag(values["mcp-max-sessions-per-key"], "mcp-max-sessions-per-key"),
    optionalFlag(values["mcp-session-idle"], "mcp-session-idle"),
  );
  const server = await startServer({
    mcpSessions,
    dataDir: values.data,
    quotas,
    store,
    ...(signingSecretFile === undefined ? {} : { signingSecretFile }),
    ...(userToolCeilings === undefined ? {} : { userToolCeilings }),
    ...(retryBaseMs === undefined ? {} : { webhooks: { retry: { baseMs: retryBaseMs } } }),
    ...(process.env[TEST_ALLOW_LOOPBACK_ENV] === "1" ? { unsafeHttpAllowLoopbackForTests: true } : {}),
    ...(port === undefined ? {} : { port }),
    ...(host === undefined ? {} : { host }),
    ...(publicUrl === undefined ? {} : { publicUrl }),
    ...(hostTools ? { hostTools } : {}),
    ...(logLevel === undefined ? {} : { logLevel }),
    ...(logFormat === undefined ? {} : { logFormat }),
    ...(workerLostMs === undefined ? {} : { workerLostAfterMs: workerLostMs }),
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(retentionMs === undefined ? {} : { retentionMs }),
    ...(retentionSweepMs === undefined ? {} : { retentionSweepMs }),
    unsafeSwitches: testSwitchesOn(process.env),
    log: (line) => out.stderr(line),
  });
  const { logger } = server;
  // From here on Node's warnings are log lines, in the log's format (held until now: process-warnings.ts).
  sendWarnings((warning) => logger.warn({ warning: warning.name }, warning.message));
  if (server.adminKey) announceAdminKey({ key: server.adminKey, url: server.url, dataDir: values.data, storeUrl: isStoreUrl(store) }, out, logger);
  // Listen for the stop signals before saying we listen: whoever reads that line may signal at
  // once, and a SIGTERM delivered before a handler exists kills the process without a shutdown.
  const stopping = stopSignal();
  out.stdout(`tapedeck listening on ${server.url}`);
  // The console's address for whoever started the server: on a terminal after that line (stdout
  // is otherwise one machine-read line), and always in the log's "listening" line.
  const consoleUrl = `${server.url}/`;
  if (out.stdoutIsTerminal === true) out.stdout(`console: ${consoleUrl} (sign in with an API key or an end user's token)`);
  logger.info({ url: server.url, console: consoleUrl }, "listening");
  const signal = await stopping;
  logger.info({ signal }, "stopping: runs stay intact and go on at the next start");
  await server.close();
  return 0;
}

/**
 * For tests only: the wait after a webhook's first failed attempt, ms (default 10 s), so a test
 * sees retries without waiting for them. Never set it in production: receivers would be hammered.
 */
export const TEST_RETRY_BASE_ENV = "TAPEDECK_TEST_WEBHOOK_RETRY_BASE_MS";

/**
 * For tests only, never in production: `1` lets scripts' `fetch` reach loopback addresses
 * (127.0.0.0/8, ::1), so a test can serve an allowed host on a local server. It opens the
 * server's own port and everything else on the host's loopback to every script.
 */
export const TEST_ALLOW_LOOPBACK_ENV = "TAPEDECK_UNSAFE_TEST_HTTP_ALLOW_LOOPBACK";

/**
 * For tests only: how long a worker may be silent before the log says it is lost, ms (default
 * 60 s), so a test sees a worker lost without waiting a minute.
 */
export const TEST_WORKER_LOST_ENV = "TAPEDECK_TEST_WORKER_LOST_MS";

/**
 * How long a run's lease lasts without renewal, ms, when `--lease-ms` is not given (default 30 s:
 * `EngineOptions.leaseMs`). With several nodes on one store, the others take over a node's runs
 * once its lease lapses: shorter means a quicker takeover after a crash, and a node whose event
 * loop or database stalls about that long losing its runs to another.
 */
export const LEASE_ENV = "TAPEDECK_LEASE_MS";

/** How long ended runs are kept when `--retention` is not given (a duration: "30d"); unset: for ever. */
export const RETENTION_ENV = "TAPEDECK_RETENTION";
/** Tests: the retention sweep's interval, ms (default a minute). */
export const TEST_RETENTION_SWEEP_ENV = "TAPEDECK_TEST_RETENTION_SWEEP_MS";

/** `--retention`, else `TAPEDECK_RETENTION`, else undefined (kept for ever). */
function retentionOption(flag: string | undefined): number | undefined {
  const [value, name] = flag !== undefined ? [flag, "--retention"] : [process.env[RETENTION_ENV], RETENTION_ENV];
  if (value === undefined || value === "") return undefined;
  let ms: number;
  try {
    ms = parseDuration(value, name);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (ms < 1) throw new UsageError(`${name} must be a duration longer than 0, such as "30d" (leave it out to keep ended runs for ever)`);
  return ms;
}

/** The name tests used before the lease was an option: still read, after `TAPEDECK_LEASE_MS` (and said as a test switch). */
const OLD_TEST_LEASE_ENV = "TAPEDECK_TEST_LEASE_MS";
/** @deprecated The lease is `--lease-ms` / `LEASE_ENV` now; kept for tests written before. */
export const TEST_LEASE_ENV = OLD_TEST_LEASE_ENV;

/** Below this a lease's renewal (every third of it) would be due before one round trip to a loaded database ends. */
export const MIN_LEASE_MS = 1_000;

/** `--lease-ms`, else `TAPEDECK_LEASE_MS`, else the engine's default (undefined). */
function leaseOption(flag: string | undefined): number | undefined {
  const [text, from] =
    flag !== undefined
      ? [flag, "--lease-ms"]
      : process.env[LEASE_ENV]
        ? [process.env[LEASE_ENV], LEASE_ENV]
        : [process.env[OLD_TEST_LEASE_ENV], OLD_TEST_LEASE_ENV];
  const ms = testMs(text, from);
  if (ms !== undefined && ms < MIN_LEASE_MS)
    throw new UsageError(`${from} must be at least ${MIN_LEASE_MS} ms (renewed every third of it; 30000 is the default), not ${ms}`);
  return ms;
}

/** What each test-only variable does, as the server says it when it is set (at start, in /health). */
const TEST_SWITCHES: Readonly<Record<string, string>> = {
  [TEST_RETRY_BASE_ENV]: "webhook retries start after this many ms instead of 10 s (receivers would be hammered)",
  [TEST_WORKER_LOST_ENV]: "a silent worker is logged as lost after this many ms instead of 60 s",
  [TEST_RETENTION_SWEEP_ENV]: "the retention sweep looks this often (ms) instead of every minute",
  [OLD_TEST_LEASE_ENV]: "the run lease's length, by its old test name: use --lease-ms or TAPEDECK_LEASE_MS",
};

/** The test-only switches set in `env`, each as "NAME=value: what it does" (the loopback one is said by the server itself). */
function testSwitchesOn(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(TEST_SWITCHES).flatMap(([name, does]) => (env[name] ? [`${name}=${env[name]}: ${does}`] : []));
}

function testMs(text: string | undefined, name: string): number | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${name} must be a number of milliseconds, not ${JSON.stringify(text)}`);
  return Number(text);
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(", ")}; got ${JSON.stringify(value)}`);
  return value as T;
}

function parsePort(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535)
    throw new UsageError(`--port must be a port number from 0 to 65535 (0 picks a free one), not ${JSON.stringify(text)}`);
  return port;
}

function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** `--mcp-max-sessions N`, `--mcp-max-sessions-per-key N` (whole numbers, at least 1) and `--mcp-session-idle <duration>` ("10m"). */
function mcpSessionOptions(
  max: string | undefined,
  perKey: string | undefined,
  idle: string | undefined,
): { maxSessions?: number; maxPerOwner?: number; idleMs?: number } {
  const options: { maxSessions?: number; maxPerOwner?: number; idleMs?: number } = {};
  const count = (value: string, flag: string): number => {
    if (!/^[1-9]\d{0,6}$/.test(value)) throw new UsageError(`${flag} must be a whole number from 1 to 9999999, not ${JSON.stringify(value)}`);
    return Number(value);
  };
  if (max !== undefined) options.maxSessions = count(max, "--mcp-max-sessions");
  if (perKey !== undefined) options.maxPerOwner = count(perKey, "--mcp-max-sessions-per-key");
  if (idle !== undefined) {
    let ms: number;
    try {
      ms = parseDuration(idle, "--mcp-session-idle");
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    if (ms < 1000) throw new UsageError(`--mcp-session-idle must be at least a second ("30m", "1h"), not ${JSON.stringify(idle)}`);
    options.idleMs = ms;
  }
  return options;
}
