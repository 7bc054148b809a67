import { startServer } from "../../runtime/start-server.js";
import { LOG_FORMATS, LOG_LEVELS } from "../../logging/server-logger.js";
import { optionalFlag, parse, UsageError } from "../args.js";
import { loadHostModule } from "../load-host-module.js";
import type { Output } from "../print.js";
import { shellArg } from "../print-waits.js";
import { parseUserToolCeilings, USER_TOOL_CEILINGS_ENV } from "../user-tool-ceilings.js";
import { isStoreUrl, storeLocation } from "../store-location.js";

export const serveUsage =
  "tapedeck serve [--port 7700] [--host 127.0.0.1] [--host-module <tools.ts>] [--public-url <url>] [--log-level info] [--log-format json|pretty] [--data <dir>] [--store <dir or postgres://… URL>] [--signing-secret-file <file>] [--user-tool-ceilings deadlineMs=60000,memoryBytes=67108864,…]";

/**
 * Runs the HTTP server until SIGINT or SIGTERM. Prints `tapedeck listening on <url>` on stdout
 * once it takes requests (with `--port 0`, the port it got), and on a store's first start the
 * admin API key on stderr, once. The log goes to stderr (`--log-level`, `--log-format`). The
 * store is `--store`, else `TAPEDECK_STORE`, else the data folder (`store-location.ts`).
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
    "user-tool-ceilings": { type: "string" },
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
  const leaseMs = testMs(process.env[TEST_LEASE_ENV], TEST_LEASE_ENV);
  const store = storeLocation(optionalFlag(values.store, "store"), values.data);
  const signingSecretFile = optionalFlag(values["signing-secret-file"], "signing-secret-file");
  const ceilingsFlag = optionalFlag(values["user-tool-ceilings"], "user-tool-ceilings");
  const userToolCeilings =
    ceilingsFlag === undefined
      ? parseUserToolCeilings(process.env[USER_TOOL_CEILINGS_ENV], USER_TOOL_CEILINGS_ENV)
      : parseUserToolCeilings(ceilingsFlag, "--user-tool-ceilings");
  const server = await startServer({
    dataDir: values.data,
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
    log: (line) => out.stderr(line),
  });
  if (server.adminKey) out.stderr(adminKeyNotice(server.adminKey, server.url, values.data, store));
  // Listen for the stop signals before saying we listen: whoever reads that line may signal at
  // once, and a SIGTERM delivered before a handler exists kills the process without a shutdown.
  const stopping = stopSignal();
  out.stdout(`tapedeck listening on ${server.url}`);
  const signal = await stopping;
  out.stderr(`tapedeck: ${signal}: stopping (runs stay intact and go on at the next start)`);
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
 * For tests only: how long a run's lease lasts without renewal, ms (default 30 s), so a test sees
 * another server take over the runs of one that stopped renewing without waiting half a minute.
 */
export const TEST_LEASE_ENV = "TAPEDECK_TEST_LEASE_MS";

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

function adminKeyNotice(key: string, url: string, data: string, store: string): string {
  // A store URL may hold a password: it is never printed.
  const where = isStoreUrl(store) ? { of: "store", flag: `--store <the store's URL>` } : { of: `data folder ${data}`, flag: `--data ${shellArg(data)}` };
  return [
    `tapedeck: created the admin API key of the ${where.of}. It is shown this once: the server keeps only its hash.`,
    "",
    `    ${key}`,
    "",
    `  Send it with every /v1 request:  Authorization: Bearer ${key}`,
    `  From code:  new Tapedeck({ baseUrl: "${url}", apiKey: "${key}" })`,
    `  More keys, limited to an end user or labels:  tapedeck keys create ${where.flag} --namespace <user> --label <k>=<v>`,
  ].join("\n");
}
