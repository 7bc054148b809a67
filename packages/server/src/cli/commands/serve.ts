import { startServer } from "../../http/index.js";
import { optionalFlag, parse, UsageError } from "../args.js";
import { loadHostModule } from "../load-host-module.js";
import type { Output } from "../print.js";
import { shellArg } from "../print-waits.js";

export const serveUsage = "tapedeck serve [--port 7700] [--host 127.0.0.1] [--host-module <tools.ts>] [--public-url <url>] [--data <dir>]";

/**
 * Runs the HTTP server until SIGINT or SIGTERM. Prints `tapedeck listening on <url>` on stdout
 * once it takes requests (with `--port 0`, the port it got), and on a data folder's first start
 * the admin API key on stderr, once.
 */
export async function serveCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    port: { type: "string" },
    host: { type: "string" },
    "host-module": { type: "string" },
    "public-url": { type: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = parsePort(optionalFlag(values.port, "port"));
  const host = optionalFlag(values.host, "host");
  const publicUrl = optionalFlag(values["public-url"], "public-url");
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(publicUrl)) throw new UsageError("--public-url must be an http(s) URL such as https://tapedeck.example.com");
  const modulePath = optionalFlag(values["host-module"], "host-module");
  const hostTools = modulePath === undefined ? undefined : await loadHostModule(modulePath);
  const retryBaseMs = testRetryBase(process.env[TEST_RETRY_BASE_ENV]);
  const server = await startServer({
    dataDir: values.data,
    ...(retryBaseMs === undefined ? {} : { webhooks: { retry: { baseMs: retryBaseMs } } }),
    ...(process.env[TEST_ALLOW_LOOPBACK_ENV] === "1" ? { unsafeHttpAllowLoopbackForTests: true } : {}),
    ...(port === undefined ? {} : { port }),
    ...(host === undefined ? {} : { host }),
    ...(publicUrl === undefined ? {} : { publicUrl }),
    ...(hostTools ? { hostTools } : {}),
    log: (line) => out.stderr(line),
  });
  if (server.adminKey) out.stderr(adminKeyNotice(server.adminKey, server.url, values.data));
  out.stdout(`tapedeck listening on ${server.url}`);
  const signal = await stopSignal();
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

function testRetryBase(text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${TEST_RETRY_BASE_ENV} must be a number of milliseconds, not ${JSON.stringify(text)}`);
  return Number(text);
}

function parsePort(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new UsageError(`--port must be a port number from 0 to 65535 (0 picks a free one), not ${JSON.stringify(text)}`);
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

function adminKeyNotice(key: string, url: string, data: string): string {
  return [
    `tapedeck: created the admin API key of the data folder ${data}. It is shown this once: the server keeps only its hash.`,
    "",
    `    ${key}`,
    "",
    `  Send it with every /v1 request:  Authorization: Bearer ${key}`,
    `  From code:  new Tapedeck({ baseUrl: "${url}", apiKey: "${key}" })`,
    `  More keys, limited to an end user or labels:  tapedeck keys create --data ${shellArg(data)} --namespace <user> --label <k>=<v>`,
  ].join("\n");
}
